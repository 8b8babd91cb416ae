package sqlstore

import (
	"fmt"
	"testing"
)

// BenchmarkReadInTxn is a read-only transaction of two point selects by
// text, as sysbench's oltp_read_only begins: the first read takes the
// table's shared-read metadata lock, the second finds it held, the commit
// releases it.
func BenchmarkReadInTxn(b *testing.B) {
	d := benchDB(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.exec("START TRANSACTION")
		d.exec(fmt.Sprintf("SELECT v FROM b WHERE id = %d", (i*7919)%10000))
		d.exec(fmt.Sprintf("SELECT v FROM b WHERE id = %d", (i*7907)%10000))
		d.exec("COMMIT")
	}
}

// BenchmarkLockForRead is what a read adds to each statement: in an
// autocommitting statement (no lock), and in a transaction that read the
// table before (the lock found held).
func BenchmarkLockForRead(b *testing.B) {
	d := benchDB(b, 10)
	for _, inTxn := range []bool{false, true} {
		b.Run(fmt.Sprintf("txn=%v", inTxn), func(b *testing.B) {
			ctx := d.newCtx()
			if inTxn {
				_, err := lq(d, ctx, "START TRANSACTION")
				if err != nil {
					b.Fatal(err)
				}
			}
			if _, err := lq(d, ctx, "SELECT v FROM b WHERE id = 1"); err != nil {
				b.Fatal(err)
			}
			db, err := d.s.Provider().Database(ctx, "mydb")
			if err != nil {
				b.Fatal(err)
			}
			tbl, _, err := db.GetTableInsensitive(ctx, "b")
			if err != nil {
				b.Fatal(err)
			}
			tx, err := d.s.writer(ctx)
			if err != nil {
				b.Fatal(err)
			}
			t := tbl.(*Table)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := t.lockForRead(ctx, tx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDDLLock is the metadata lock a DDL statement takes on its table
// (Table.ddlWriter): EXCLUSIVE, and EXCLUSIVE downgraded to
// SHARED_NO_WRITE as an index build takes it, with the catalog reads
// around the grant; the locks are let go after each.
func BenchmarkDDLLock(b *testing.B) {
	d := benchDB(b, 10)
	for _, mode := range []mdlMode{mdlExclusive, mdlSharedNoWrite} {
		b.Run(mode.String(), func(b *testing.B) {
			ctx := d.newCtx()
			// In a transaction and without text: the statement does not
			// begin afresh after the grant (ddlAlone), which would time
			// the engine's Begin.
			if _, err := lq(d, ctx, "START TRANSACTION"); err != nil {
				b.Fatal(err)
			}
			ctx = ctx.WithQuery("")
			db, err := d.s.Provider().Database(ctx, "mydb")
			if err != nil {
				b.Fatal(err)
			}
			tbl, _, err := db.GetTableInsensitive(ctx, "b")
			if err != nil {
				b.Fatal(err)
			}
			t := tbl.(*Table)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				tx, err := t.ddlWriter(ctx, mode)
				if err != nil {
					b.Fatal(err)
				}
				tx.releaseMDL()
			}
		})
	}
}
