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
// knows less, and the status variables show zeros), Locker on a
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
//	contract               embedded engine (kv.Engine)                   TiKV (client-go txnkv)
//	Engine.Begin           DB snapshot + indexed Batch                   Client.Begin: KVTxn with a start ts from PD
//	Txn.StartVersion       Snapshot.Seq                                  KVTxn.StartTS
//	Engine.LastVersion     DB.LastSeq                                    PD's current ts (a fresh GetTS)
//	Engine.Latest          DB reads at the visible sequence              a snapshot at a fresh ts per read
//	Reader.Get             Batch.Get / DB.Get at the snapshot            KVTxn.Get (membuffer, then snapshot Get)
//	Reader.NewIter         Batch.NewIter / DB.NewIter                    KVTxn.Iter / IterReverse (union iterator)
//	Txn.Snapshot           DB reads at the snapshot's sequence           KVTxn.GetSnapshot
//	Txn.Current            Batch over the latest state                   membuffer over a snapshot at a fresh ts
//	MultiGetter.MultiGet   Batch.MultiGet / DB.MultiGet                  KVTxn.BatchGet (membuffer first)
//	MultiScanner           DB.NewMultiScan (prepared, reads coalesced)   concurrent Scans, one per range or region
//	Set, Delete            Batch.Set / Delete                            KVTxn.Set / Delete (membuffer)
//	DeleteRange            Batch.DeleteRange (a range tombstone)         scan the range and Delete each key
//	Count, Len             Batch.Count / Len                             membuffer Len / Size
//	RollbackTo             Batch.RollbackTo at the n-th entry            membuffer Staging per mark, Cleanup to undo
//	ViewAt, AdvanceView    a second indexed Batch fed from a write log   membuffer staging snapshots (as TiDB reads them)
//	Guard                  commit checks the range's newer versions      lock the guarded keys, or a version key of the range
//	Commit                 Batch.CommitIfNoConflict in the commit queue  KVTxn.Commit (2PC); write conflict -> ErrConflict
//	SetDurable             WriteOptions Sync for this commit             nothing: Raft commits are durable
//	Rollback               Snapshot.Close                                KVTxn.Rollback
//	Locker.LockKeys        kv/lock table; the for-update version after   KVTxn.LockKeys with a LockCtx wait time and a
//	                       the grants                                    for-update ts (write conflict if newer)
//	Locker.SetPessimistic  commit checks keys after the for-update       KVTxn.SetPessimistic(true): prewrite of
//	                       version, not the snapshot                     locked keys skips the conflict check
//	Locker.LatestView      the view's batch over the latest state        membuffer over a snapshot at the for-update ts
//	LockInspector          kv/lock Table.Waits                           TiKV's lock waiter manager (GetLockWaitInfo)
//	ConflictError          the key of a failed commit check              the key of a WriteConflict error
//	SizeEstimator          DB.ApproximateSize / EstimateRange            PD region approximate sizes and keys
//	StatsSource            DB.Stats (kv/stats counters)                  client-go metrics mapped to the counters
//	BulkLoader             DB.NewIngest: tables written and ingested     (none: TiKV's import service is another API)
//
// The conformance suite, storage/storagetest, checks these promises through
// the contract alone; an engine's tests run it.
package storage
