// Package storage is the contract between the SQL layer and a storage
// engine: everything package sqlstore reads and writes goes through it, and
// nothing else of an engine. It is small on purpose, so that both the
// embedded LSM engine (package kv, kv.Engine) and a distributed
// transactional KV such as TiKV can stand behind it.
//
// # What it promises
//
//   - Snapshot reads. A Txn reads the state of the last commit before Begin
//     (its StartVersion) plus its own writes; nothing committed later is
//     visible to it. Every Reader reads one fixed state; Engine.Latest reads
//     the latest committed state at each call.
//   - First committer wins. Commit applies every write or none. It fails with
//     an error wrapping ErrConflict when another transaction committed,
//     after this one's snapshot, a write to a key this one writes (Set,
//     Delete) or to a key in a range it guards (Guard). DeleteRange is not
//     checked unless guarded. Together this is snapshot isolation; the
//     reads a transaction depends on without writing them are made safe by
//     guarding them (the SQL layer guards locking reads, foreign-key checks
//     and the catalog records of the tables it writes).
//   - Rollback inside a transaction. Positions in a transaction's writes are
//     write counts; RollbackTo(n) undoes the writes after the n-th, which is
//     what statement and savepoint rollback need. Iterators that saw undone
//     writes must be reopened (the SQL layer reopens them and seeks back).
//   - Statement views. ViewAt and AdvanceView read the snapshot plus the
//     writes up to a position, so that a statement's scans do not see the
//     statement's own writes (the Halloween problem).
//   - Durability is the engine's: a commit is durable when it returns if the
//     engine was opened so, or if the transaction asked for it (SetDurable).
//
// Optional parts are found by type assertion, so a simpler engine can do
// without them: MultiGetter and MultiScanner on readers (batched reads;
// without them the SQL layer calls Get per key and NewIter per range),
// SizeEstimator and StatsSource on the engine (without them the planner
// knows less, and the status variables show zeros; an estimator may
// answer ErrNoEstimate for a range it cannot size), Locker on a
// transaction (key locks for pessimistic transactions; without it the SQL
// layer runs every transaction optimistically and relies on Guard),
// LockInspector on the engine (who waits for whom), BulkLoader on the
// engine (sorted keys added outside any transaction; without it the SQL
// layer writes an index build's entries in its transaction), and
// ConflictError in a failed commit's error (the key, which the SQL layer
// names as a row).
//
// # How the engines map
//
//	contract               embedded engine (kv.Engine)                   TiKV (storage/tikv, client-go txnkv)
//	Engine.Begin           DB snapshot + indexed Batch                   a start ts from PD; a KVTxn when needed
//	Txn.StartVersion       Snapshot.Seq                                  the start ts
//	Engine.LastVersion     DB.LastSeq                                    PD's current ts (a fresh GetTS)
//	Engine.Latest          DB reads at the visible sequence              a snapshot at a fresh ts per read
//	Reader.Get             Batch.Get / DB.Get at the snapshot            the writes kept, then a snapshot Get
//	Reader.NewIter         Batch.NewIter / DB.NewIter                    the writes merged over snapshot Scans
//	Txn.Snapshot           DB reads at the snapshot's sequence           snapshot reads at the start ts
//	Txn.Current            Batch over the latest state                   the writes over a snapshot at a fresh ts
//	MultiGetter.MultiGet   Batch.MultiGet / DB.MultiGet                  the writes kept, then one BatchGet
//	MultiScanner           DB.NewMultiScan (prepared, reads coalesced)   the ranges' first batches fetched concurrently
//	Set, Delete            Batch.Set / Delete                            a write log and a copy-on-write B-tree
//	DeleteRange            Batch.DeleteRange (a range tombstone)         at commit, a Delete of each key of the range
//	Count, Len             Batch.Count / Len                             the write log's length and bytes
//	RollbackTo             Batch.RollbackTo at the n-th entry            the B-tree built again from the log
//	ViewAt, AdvanceView    a second indexed Batch fed from a write log   B-trees of the log's first n writes
//	Guard                  commit checks the range's newer versions      before the commit, the range's keys and their
//	                                                                     commit ts compared with the snapshot's
//	Commit                 Batch.CommitIfNoConflict in the commit queue  KVTxn.Commit (2PC); write conflict -> ErrConflict
//	SetDurable             WriteOptions Sync for this commit             nothing: Raft commits are durable
//	Rollback               Snapshot.Close                                KVTxn.Rollback
//	Locker.LockKeys        kv/lock table; the for-update version after   KVTxn.LockKeys with a LockCtx wait time and a
//	                       the grants                                    fresh for-update ts (again on a write conflict)
//	Locker.SetPessimistic  commit checks keys after the for-update       the KVTxn begun pessimistic at the first lock:
//	                       version, not the snapshot                     prewrite of locked keys skips the conflict check
//	Locker.LatestView      the view's batch over the latest state        the view over a snapshot at a fresh ts
//	LockInspector          kv/lock Table.Waits                           not yet (TiKV's lock waiter manager)
//	ConflictError          the key of a failed commit check              the key of a WriteConflict error
//	SizeEstimator          DB.ApproximateSize / EstimateRange            PD's approximate region sizes (HTTP API), prorated
//	StatsSource            DB.Stats (kv/stats counters)                  not yet (client-go metrics)
//	BulkLoader             DB.NewIngest: tables written and ingested     (none: TiKV's import service is another API)
//
// The conformance suite, storage/storagetest, checks these promises through
// the contract alone; an engine's tests run it.
package storage
