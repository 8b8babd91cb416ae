package sqlstore

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/stretchr/testify/require"
)

// TestLoadDataSpec: LOAD DATA's reading of a file, case by case. Each
// "load" loads its input into a fresh t (id INT PRIMARY KEY, a TEXT, b
// TEXT, n INT, by the schema argument otherwise): the first line is what
// follows the table name in the statement, the lines after "====" the
// file (each ending in a newline; crlf ends them in "\r\n", nonl leaves
// the last one without; local loads with LOCAL, ignore with IGNORE,
// nonstrict under an empty sql_mode). The
// rows are shown with Go quoting, then the statement's warnings.
func TestLoadDataSpec(t *testing.T) {
	d := newTestDB(t)
	dir := t.TempDir()
	n := 0
	datadriven.RunTest(t, "testdata/load_data", func(t *testing.T, td *datadriven.TestData) string {
		if td.Cmd != "load" {
			td.Fatalf(t, "unknown command %s", td.Cmd)
		}
		clause, file, ok := strings.Cut(td.Input, "\n====\n")
		if !ok {
			td.Fatalf(t, "no ==== line")
		}
		file += "\n"
		if td.HasArg("crlf") {
			file = strings.ReplaceAll(file, "\n", "\r\n")
		}
		if td.HasArg("nonl") {
			file = strings.TrimSuffix(strings.TrimSuffix(file, "\n"), "\r")
		}
		n++
		path := filepath.Join(dir, fmt.Sprintf("f%d.txt", n))
		require.NoError(t, os.WriteFile(path, []byte(file), 0o644))
		schema := "id INT PRIMARY KEY, a TEXT, b TEXT, n INT"
		for _, a := range td.CmdArgs {
			if a.Key == "schema" {
				schema = strings.Join(a.Vals, ", ")
			}
		}
		d.exec("DROP TABLE IF EXISTS t")
		d.exec("CREATE TABLE t (" + schema + ")")
		local, ignore := "", ""
		if td.HasArg("local") {
			local = "LOCAL "
			d.exec("SET GLOBAL local_infile = 1")
			defer d.exec("SET GLOBAL local_infile = 0")
		}
		if td.HasArg("nonstrict") {
			d.exec("SET SESSION sql_mode = ''")
			defer d.exec("SET SESSION sql_mode = DEFAULT")
		}
		if td.HasArg("ignore") {
			ignore = "IGNORE "
		}
		stmt := fmt.Sprintf("LOAD DATA %sINFILE '%s' %sINTO TABLE t %s", local, path, ignore, clause)
		if err := runStmt(d, d.ctx, stmt); err != nil {
			return fmt.Sprintf("error %d: %s\n", MySQLError(err).Num, MySQLError(err).Message)
		}
		warnings := d.exec("SHOW WARNINGS")
		var sb strings.Builder
		for _, row := range d.exec("SELECT * FROM t ORDER BY 1") {
			for i, v := range row {
				if i > 0 {
					sb.WriteByte(' ')
				}
				switch v := v.(type) {
				case nil:
					sb.WriteString("NULL")
				case string:
					fmt.Fprintf(&sb, "%q", v)
				default:
					fmt.Fprint(&sb, v)
				}
			}
			sb.WriteByte('\n')
		}
		for _, w := range warnings {
			fmt.Fprintf(&sb, "warning %v: %v\n", w[1], w[2])
		}
		return sb.String()
	})
}

// TestLoadDataLocal: LOCAL needs local_infile (3948 without it); an
// embedded connection then reads the process's file.
func TestLoadDataLocal(t *testing.T) {
	d := newTestDB(t)
	path := filepath.Join(t.TempDir(), "rows.csv")
	require.NoError(t, os.WriteFile(path, []byte("1,\"x, y\"\n2,\"z\"\n"), 0o644))
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, s TEXT)")
	stmt := fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"'", path)
	d.exec("SET GLOBAL local_infile = 0")
	err := d.execErr(stmt)
	require.Equal(t, 3948, int(MySQLError(err).Num))
	require.Equal(t, "42000", MySQLError(err).State)
	d.exec("SET GLOBAL local_infile = 1")
	t.Cleanup(func() { d.exec("SET GLOBAL local_infile = 0") })
	d.exec(stmt)
	require.Equal(t, []sql.Row{{int32(1), "x, y"}, {int32(2), "z"}}, d.exec("SELECT * FROM t ORDER BY id"))
	err = d.execErr(fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE t", path+".missing"))
	require.Equal(t, 29, int(MySQLError(err).Num))
}

// encodeLoadFields writes rows as SELECT ... INTO OUTFILE writes them with
// FIELDS TERMINATED BY ',' ENCLOSED BY '"' ESCAPED BY '\\' (every field
// enclosed, the enclosing and escape characters and NUL escaped, NULL as
// \N), nil fields being NULL.
func encodeLoadFields(rows [][]*string) []byte {
	var b []byte
	for _, row := range rows {
		for i, f := range row {
			if i > 0 {
				b = append(b, ',')
			}
			if f == nil {
				b = append(b, `\N`...)
				continue
			}
			b = append(b, '"')
			for j := 0; j < len(*f); j++ {
				switch c := (*f)[j]; c {
				case '"', '\\':
					b = append(b, '\\', c)
				case 0:
					b = append(b, '\\', '0')
				default:
					b = append(b, c)
				}
			}
			b = append(b, '"')
		}
		b = append(b, '\n')
	}
	return b
}

// FuzzLoadDataReader: any input under any terminators ends in lines of
// fields without a panic, and rows written as INTO OUTFILE writes them read
// back as they were.
func FuzzLoadDataReader(f *testing.F) {
	f.Add([]byte("1,\"a,b\"\n2,\"x\"\"y\"\n"), ",", "\"", "\\", "\n", "", "a\x00b\"c\\", "\n,\"")
	f.Add([]byte("x\ty\n\\N\t\\\n"), "\t", "", "\\", "\n", "", "", "")
	f.Add([]byte("||a||b;;c"), "||", "'", "", ";;", "p", "it's", "")
	f.Fuzz(func(t *testing.T, in []byte, term, encl, esc, lineTerm, starting, s1, s2 string) {
		if term == "" || lineTerm == "" {
			return
		}
		n := &plan.LoadData{FieldsTerminatedBy: term, FieldsEnclosedBy: encl, FieldsEscapedBy: esc,
			LinesTerminatedBy: lineTerm, LinesStartingBy: starting}
		rd := newLoadDataReader(bytes.NewReader(in), n)
		for lines := 0; ; lines++ {
			_, err := rd.next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			require.LessOrEqual(t, lines, len(in)+1, "more lines than bytes")
		}

		rows := [][]*string{{&s1, nil, &s2}, {&s2, &s1, nil}}
		csv := &plan.LoadData{FieldsTerminatedBy: ",", FieldsEnclosedBy: `"`, FieldsEscapedBy: `\`, LinesTerminatedBy: "\n"}
		rd = newLoadDataReader(bytes.NewReader(encodeLoadFields(rows)), csv)
		for _, want := range rows {
			got, err := rd.next()
			require.NoError(t, err)
			require.Len(t, got, len(want))
			for i, w := range want {
				if w == nil {
					require.True(t, got[i].null, "field %d", i)
				} else {
					require.False(t, got[i].null, "field %d", i)
					require.Equal(t, *w, got[i].text, "field %d", i)
				}
			}
		}
		_, err := rd.next()
		require.ErrorIs(t, err, io.EOF)
	})
}
