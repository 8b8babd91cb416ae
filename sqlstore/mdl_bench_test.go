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
