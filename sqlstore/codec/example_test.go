package codec_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/strata-db/strata/sqlstore/codec"
)

// Keys of a secondary index on (name COLLATE utf8mb4_0900_ai_ci, id DESC):
// case-insensitive names collide, ids order backwards, and the successor of a
// name's key bounds every entry for that name.
func Example() {
	name := types.MustCreateString(sqltypes.VarChar, 64, sql.Collation_utf8mb4_0900_ai_ci)
	key := func(n string, id int64) []byte {
		k := codec.AppendUvarintAscending(nil, 7) // index ID
		k, _ = codec.AppendKey(k, name, n, codec.Asc)
		k, _ = codec.AppendKey(k, types.Int64, id, codec.Desc)
		return k
	}
	bob1, bob2, alice := key("bob", 1), key("BOB", 2), key("alice", 9)
	fmt.Println(bytes.Compare(alice, bob1), bytes.Compare(bob2, bob1))

	prefix, _ := codec.AppendKey(codec.AppendUvarintAscending(nil, 7), name, "Bob", codec.Asc)
	end := codec.PrefixSuccessor(nil, prefix)
	fmt.Println(bytes.Compare(prefix, bob1) <= 0 && bytes.Compare(bob1, end) < 0)

	rest, _, err := codec.DecodeKey(bob1[1:], name, codec.Asc)
	fmt.Println(errors.Is(err, codec.ErrNotDecodable)) // the row keeps the exact name
	_, id, _ := codec.DecodeKey(rest, types.Int64, codec.Desc)
	fmt.Println(id)

	sch := sql.Schema{{Name: "id", Type: types.Int64}, {Name: "name", Type: name}}
	val, _ := codec.AppendRow(nil, sch, sql.Row{int64(1), "bob"})
	row, _ := codec.DecodeRow(val, sch, nil)
	fmt.Println(row)
	// Output:
	// -1 -1
	// true
	// true
	// 1
	// [1 bob]
}
