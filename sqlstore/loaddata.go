package sqlstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// LOAD DATA [LOCAL] INFILE, as MySQL 8 reads a file (the statement's
// "Field and Line Handling"). GMS splits the file at every line terminator
// and every field terminator, and takes a field as enclosed only when it
// both starts and ends with the enclosing character, so valid CSV (a quoted
// field holding a comma, a newline or a doubled quote) fails or loads
// wrong; it unescapes by deleting the escape character. Its LOCAL refuses
// with 1105 where MySQL says 3948, and an embedded connection, which has no
// client to ask for the file, cannot use LOCAL at all.
//
// The exec builder of the store's engines (nestedTxnBuilder) builds the
// LoadData node with loadDataReader instead: a field starting with the
// ENCLOSED BY character runs to the next enclosing character followed by a
// field or line terminator (a doubled one stands for itself), so
// terminators inside it are data; the ESCAPED BY character makes the next
// character literal, or stands for NUL, backspace, newline, carriage
// return, tab or Ctrl-Z (\0 \b \n \r \t \Z); an unenclosed \N is NULL, and
// so, when ENCLOSED BY is set, is an unenclosed NULL; LINES STARTING BY
// skips a line's text up to the prefix and lines without it; IGNORE n
// LINES skips the first n lines. A line with fewer fields than the
// statement reads (1261) or more (1262), an empty field for a number
// column (1366) and one for a date or time column (1292) fail the
// statement in strict sql_mode; with LOCAL or IGNORE, or outside strict
// mode, they are warnings (1265 for the date or time), the extra fields
// are dropped, the empty number or date is its type's zero and the
// missing columns take their defaults, NULL, or their type's implicit
// default. LOCAL needs the global local_infile (3948
// otherwise); over the server the file comes from the client, in an
// embedded connection (driver, shell), where client and server are the
// same process, from the process's files. Rows become the insert's source
// as GMS's did, so they take the table's ordinary write path.
//
// Targets GMS v0.20.0. Tests: TestLoadDataSpec (testdata/load_data),
// TestLoadDataLocal; server's TestServerLoadDataLocal.

// errLocalInfileDisabled is MySQL's 3948.
func errLocalInfileDisabled() error {
	return mysql.NewSQLError(3948, "42000", "Loading local data is disabled; this must be enabled on both the client and server sides")
}

// buildLoadData opens the file n names and returns the iterator of its rows.
func buildLoadData(ctx *sql.Context, n *plan.LoadData) (sql.RowIter, error) {
	var r io.ReadCloser
	if n.Local {
		_, on, ok := sql.SystemVariables.GetGlobal("local_infile")
		if !ok || !isTrue(on) {
			return nil, errLocalInfileDisabled()
		}
		var err error
		r, err = ctx.LoadInfile(n.File)
		if sql.ErrUnsupportedFeature.Is(err) {
			// No client to ask: an embedded connection, whose client is
			// this process.
			r, err = os.Open(n.File)
			if err != nil {
				return nil, mysql.NewSQLError(29, "HY000", "File '%s' not found (Errcode: 2 - No such file or directory)", n.File)
			}
		} else if err != nil {
			return nil, err
		}
	} else {
		if _, dir, ok := sql.SystemVariables.GetGlobal("secure_file_priv"); ok {
			if d, _ := dir.(string); d != "" && !underDir(d, n.File) {
				return nil, mysql.NewSQLError(1290, "HY000", "The MySQL server is running with the --secure-file-priv option so it cannot execute this statement")
			}
		}
		f, err := os.Open(n.File)
		if err != nil {
			return nil, sql.ErrLoadDataCannotOpen.New(err.Error())
		}
		r = f
	}
	if n.LinesTerminatedBy == "" {
		r.Close()
		return nil, fmt.Errorf("%w: LOAD DATA with an empty LINES TERMINATED BY (fixed-width rows)", ErrUnsupported)
	}
	sch := n.Schema()
	colNames := n.ColNames
	if len(colNames) == 0 {
		colNames = make([]string, len(sch))
		for i, col := range sch {
			colNames[i] = col.Name
		}
	}
	source := ""
	if len(sch) > 0 {
		source = sch[0].Source
	}
	fieldCol := make([]int, len(n.UserVars))
	for f, c := 0, 0; f < len(n.UserVars) && c < len(colNames); f++ {
		if n.UserVars[f] != nil {
			fieldCol[f] = -1
			continue
		}
		fieldCol[f] = sch.IndexOf(colNames[c], source)
		c++
	}
	l := &loadDataIter{
		n:        n,
		r:        r,
		rd:       newLoadDataReader(r, n),
		fieldCol: fieldCol,
		ignore:   n.IgnoreNum,
		strict:   sql.LoadSqlMode(ctx).ModeEnabled("STRICT_TRANS_TABLES") || sql.LoadSqlMode(ctx).ModeEnabled("STRICT_ALL_TABLES"),
		lenient:  n.Local || n.IsIgnore,
		nfields:  len(sch),
	}
	if len(n.ColNames) > 0 {
		// The fields are the column list's columns and user variables; a
		// column only SET was added after the list's columns (planbuilder)
		// and reads no field.
		l.colIdx = make([]int, len(n.ColNames))
		for i, name := range n.ColNames {
			l.colIdx[i] = sch.IndexOf(name, source)
		}
		set := 0
		for i := len(n.ColNames) - 1; i >= 0 && len(n.SetExprs) > 0; i-- {
			if c := l.colIdx[i]; c < 0 || n.SetExprs[c] == nil {
				break
			}
			set++
		}
		l.nfields = len(n.ColNames) - set
		for _, uv := range n.UserVars {
			if uv != nil {
				l.nfields++
			}
		}
	}
	return l, nil
}

func isStringType(t sql.Type) bool {
	_, ok := t.(sql.StringType)
	return ok
}

func isTrue(v any) bool {
	switch v := v.(type) {
	case int8:
		return v != 0
	case int64:
		return v != 0
	case bool:
		return v
	}
	return false
}

// underDir reports whether file lies in dir (both as given, cleaned); the
// server confines paths further (server/serverfiles.go).
func underDir(dir, file string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(file))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

type loadDataIter struct {
	n        *plan.LoadData
	r        io.ReadCloser
	rd       *loadDataReader
	fieldCol []int
	ignore   int64
	// colIdx is the schema index of each column of the column list.
	colIdx []int
	// nfields is the number of fields a line should have.
	nfields int
	// row counts the rows read, for the messages' "at row N".
	row int
	// strict is the statement's strict sql_mode; lenient, for LOCAL or
	// IGNORE, makes what strict mode refuses a warning, as in MySQL.
	strict, lenient bool
}

// errLoad returns MySQL's error num for a line that strict mode refuses,
// or nil after recording it as a warning when the statement is lenient or
// not strict.
func (l *loadDataIter) errLoad(ctx *sql.Context, num int, state, format string, args ...any) error {
	if l.strict && !l.lenient {
		return mysql.NewSQLError(num, state, format, args...)
	}
	ctx.Warn(num, format, args...)
	return nil
}

// emptyNumberKind names a number type as MySQL's 1366 does for an empty
// field, "" for other types.
func emptyNumberKind(t sql.Type) string {
	switch {
	case types.IsInteger(t), types.IsYear(t):
		return "integer"
	case types.IsDecimal(t):
		return "decimal"
	case types.IsFloat(t):
		return "double"
	}
	return ""
}

// emptyTemporalKind names a date or time type as MySQL's 1292 does for an
// empty field, "" for other types.
func emptyTemporalKind(t sql.Type) string {
	switch {
	case types.IsTimespan(t):
		return "time"
	case types.IsDateType(t):
		return "date"
	case types.IsTime(t):
		return "datetime"
	}
	return ""
}

// implicitDefault is what a column a short line leaves out gets: its
// default, NULL if it has none and is nullable (or numbers itself), its
// type's zero value otherwise (MySQL's implicit default).
func implicitDefault(col *sql.Column) sql.Expression {
	switch {
	case col.Default != nil:
		return col.Default
	case col.Nullable || col.AutoIncrement:
		return expression.NewLiteral(nil, types.Null)
	}
	return expression.NewLiteral(col.Type.Zero(), col.Type)
}

func (l *loadDataIter) Next(ctx *sql.Context) (sql.Row, error) {
	for ; l.ignore > 0; l.ignore-- {
		if _, err := l.rd.next(); err != nil {
			return nil, err
		}
	}
	for {
		fields, err := l.rd.next()
		if err != nil {
			return nil, err
		}
		if fields == nil {
			continue // a line without LINES STARTING BY's prefix
		}
		l.row++
		switch {
		case len(fields) < l.nfields:
			// MySQL's ER_WARN_TOO_FEW_RECORDS.
			if err := l.errLoad(ctx, 1261, "01000", "Row %d doesn't contain data for all columns", l.row); err != nil {
				return nil, err
			}
		case len(fields) > l.nfields:
			// MySQL's ER_WARN_TOO_MANY_RECORDS: the extra fields are
			// dropped.
			if err := l.errLoad(ctx, 1262, "01000", "Row %d was truncated; it contained more data than there were input columns", l.row); err != nil {
				return nil, err
			}
		}
		exprs, err := l.exprs(ctx, fields)
		if err != nil {
			return nil, err
		}
		return evalLoadRow(ctx, exprs)
	}
}

// exprs returns the expressions of the row's columns, as GMS's iterator
// builds them: literals from the fields, user variables and SET assigned,
// defaults where no field gives a value.
func (l *loadDataIter) exprs(ctx *sql.Context, fields []loadField) ([]sql.Expression, error) {
	n := l.n
	dest := n.DestSch
	fieldRow := make(sql.Row, len(fields))
	for i, f := range fields {
		if !f.null {
			fieldRow[i] = f.text
		}
	}
	exprs := make([]sql.Expression, len(dest))
	ei := 0 // the column slots filled
	for fi := 0; fi < len(fields) && fi < len(n.UserVars); fi++ {
		if uv := n.UserVars[fi]; uv != nil {
			sf := uv.(*expression.SetField)
			v, err := sf.RightChild.Eval(ctx, fieldRow)
			if err != nil {
				return nil, err
			}
			if err := ctx.SetUserVariable(ctx, sf.LeftChild.(*expression.UserVar).Name, v, types.ApproximateTypeFromValue(v)); err != nil {
				return nil, err
			}
			continue
		}
		if ei >= len(exprs) {
			continue
		}
		f := fields[fi]
		switch {
		case f.null:
			exprs[ei] = expression.NewLiteral(nil, types.Null)
		case f.text == "" && l.fieldCol[fi] >= 0 && emptyNumberKind(dest[l.fieldCol[fi]].Type) != "":
			// An empty field of a number is 0, with 1366, which strict mode
			// makes an error.
			col := dest[l.fieldCol[fi]]
			if err := l.errLoad(ctx, 1366, "HY000", "Incorrect %s value: '' for column '%s' at row %d", emptyNumberKind(col.Type), col.Name, l.row); err != nil {
				return nil, err
			}
			exprs[ei] = expression.NewLiteral(col.Type.Zero(), col.Type)
		case f.text == "" && l.fieldCol[fi] >= 0 && emptyTemporalKind(dest[l.fieldCol[fi]].Type) != "":
			// An empty field of a date or time is its zero value, with 1265
			// ("Data truncated"), which strict mode makes 1292.
			col := dest[l.fieldCol[fi]]
			if l.strict && !l.lenient {
				return nil, mysql.NewSQLError(1292, "22007", "Incorrect %s value: '' for column '%s' at row %d", emptyTemporalKind(col.Type), col.Name, l.row)
			}
			ctx.Warn(1265, "Data truncated for column '%s' at row %d", col.Name, l.row)
			exprs[ei] = expression.NewLiteral(col.Type.Zero(), col.Type)
		case f.text == "" && l.fieldCol[fi] >= 0 && !isStringType(dest[l.fieldCol[fi]].Type):
			// An empty field of another column that is not a string takes
			// the column's default, or NULL.
			if col := dest[l.fieldCol[fi]]; col.Default != nil {
				exprs[ei] = col.Default
			} else {
				exprs[ei] = expression.NewLiteral(nil, types.Null)
			}
		default:
			exprs[ei] = expression.NewLiteral(f.text, types.LongText)
		}
		ei++
	}
	// The columns of the list a short line has no field for (1261 above).
	if len(fields) < l.nfields {
		for ; ei < len(l.colIdx) && ei < len(exprs); ei++ {
			if c := l.colIdx[ei]; c >= 0 && exprs[ei] == nil {
				exprs[ei] = implicitDefault(dest[c])
			}
		}
	}
	for fi, ei := 0, 0; len(n.SetExprs) > 0 && fi < len(l.fieldCol) && ei < len(exprs); fi++ {
		c := l.fieldCol[fi]
		if c == -1 {
			continue
		}
		if se := n.SetExprs[c]; se != nil {
			v, err := se.Eval(ctx, fieldRow)
			if err != nil {
				return nil, err
			}
			exprs[ei] = expression.NewLiteral(v, se.Type())
		}
		ei++
	}
	if len(n.ColNames) == 0 {
		for i, e := range exprs {
			if e != nil {
				continue
			}
			exprs[i] = implicitDefault(dest[i])
		}
	}
	return exprs, nil
}

// evalLoadRow evaluates the row's expressions; defaults that are not
// literals may read other columns, so they go second.
func evalLoadRow(ctx *sql.Context, exprs []sql.Expression) (sql.Row, error) {
	row := make(sql.Row, len(exprs))
	var later []int
	var err error
	for i, e := range exprs {
		if e == nil {
			continue
		}
		if d, ok := e.(*sql.ColumnDefaultValue); ok && !d.IsLiteral() {
			later = append(later, i)
			continue
		}
		if row[i], err = e.Eval(ctx, row); err != nil {
			return nil, err
		}
	}
	for _, i := range later {
		if row[i], err = exprs[i].Eval(ctx, row); err != nil {
			return nil, err
		}
	}
	return row, nil
}

func (l *loadDataIter) Close(*sql.Context) error { return l.r.Close() }

// loadField is one field of a line: its text after unescaping, or NULL.
type loadField struct {
	text string
	null bool
}

// loadDataReader splits a LOAD DATA file into lines and fields.
type loadDataReader struct {
	r        *bufio.Reader
	term     []byte // FIELDS TERMINATED BY
	enclose  byte   // FIELDS ENCLOSED BY, 0 for none
	escape   byte   // FIELDS ESCAPED BY, 0 for none
	lineTerm []byte // LINES TERMINATED BY
	starting []byte // LINES STARTING BY
	field    []byte
	fields   []loadField
	eof      bool
}

func newLoadDataReader(r io.Reader, n *plan.LoadData) *loadDataReader {
	rd := &loadDataReader{
		r:        bufio.NewReaderSize(r, 256<<10),
		term:     []byte(n.FieldsTerminatedBy),
		lineTerm: []byte(n.LinesTerminatedBy),
		starting: []byte(n.LinesStartingBy),
	}
	if n.FieldsEnclosedBy != "" {
		rd.enclose = n.FieldsEnclosedBy[0]
	}
	if n.FieldsEscapedBy != "" {
		rd.escape = n.FieldsEscapedBy[0]
	}
	return rd
}

// peekIs reports whether the input continues with s.
func (rd *loadDataReader) peekIs(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	b, _ := rd.r.Peek(len(s))
	return bytes.Equal(b, s)
}

// next returns the fields of the next line, nil for a line LINES STARTING
// BY skips, or io.EOF after the last line. The fields are valid until the
// next call.
func (rd *loadDataReader) next() ([]loadField, error) {
	if rd.eof {
		return nil, io.EOF
	}
	if _, err := rd.r.Peek(1); err == io.EOF {
		rd.eof = true
		return nil, io.EOF
	}
	if len(rd.starting) > 0 {
		found, err := rd.skipToPrefix()
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, nil
		}
	}
	rd.fields = rd.fields[:0]
	for {
		f, endLine, err := rd.readField()
		if err != nil {
			return nil, err
		}
		rd.fields = append(rd.fields, f)
		if endLine {
			return rd.fields, nil
		}
	}
}

// skipToPrefix skips the line's text up to and including LINES STARTING
// BY's prefix; a line without it is skipped whole (false).
func (rd *loadDataReader) skipToPrefix() (bool, error) {
	for {
		if rd.peekIs(rd.starting) {
			rd.r.Discard(len(rd.starting))
			return true, nil
		}
		if rd.peekIs(rd.lineTerm) {
			rd.r.Discard(len(rd.lineTerm))
			return false, nil
		}
		if _, err := rd.r.ReadByte(); err == io.EOF {
			rd.eof = true
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
}

// unescaped returns what the escape character followed by c stands for.
func unescaped(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'b':
		return '\b'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'Z':
		return 26
	}
	return c
}

// readField reads one field and the terminator after it, and reports
// whether that ended the line (or the file).
func (rd *loadDataReader) readField() (loadField, bool, error) {
	rd.field = rd.field[:0]
	enclosed := false
	if rd.enclose != 0 {
		if b, err := rd.r.Peek(1); err == nil && b[0] == rd.enclose {
			rd.r.Discard(1)
			enclosed = true
		}
	}
	sawEscapeN := false // the field is exactly the escape character and N
	for {
		if !enclosed {
			if rd.peekIs(rd.lineTerm) {
				rd.r.Discard(len(rd.lineTerm))
				return rd.finishField(false, sawEscapeN), true, nil
			}
			if rd.peekIs(rd.term) {
				rd.r.Discard(len(rd.term))
				return rd.finishField(false, sawEscapeN), false, nil
			}
		}
		c, err := rd.r.ReadByte()
		if err == io.EOF {
			rd.eof = true
			return rd.finishField(false, sawEscapeN), true, nil
		}
		if err != nil {
			return loadField{}, false, err
		}
		switch {
		case rd.escape != 0 && c == rd.escape:
			e, err := rd.r.ReadByte()
			if err == io.EOF {
				rd.field = append(rd.field, c)
				continue
			}
			if err != nil {
				return loadField{}, false, err
			}
			if e == 'N' && !enclosed && len(rd.field) == 0 {
				sawEscapeN = true
			}
			rd.field = append(rd.field, unescaped(e))
			continue
		case enclosed && c == rd.enclose:
			if b, err := rd.r.Peek(1); err == nil && b[0] == rd.enclose {
				// A doubled enclosing character stands for itself.
				rd.r.Discard(1)
				rd.field = append(rd.field, c)
				continue
			}
			if rd.peekIs(rd.lineTerm) {
				rd.r.Discard(len(rd.lineTerm))
				return rd.finishField(true, false), true, nil
			}
			if rd.peekIs(rd.term) {
				rd.r.Discard(len(rd.term))
				return rd.finishField(true, false), false, nil
			}
			if _, err := rd.r.Peek(1); errors.Is(err, io.EOF) {
				rd.eof = true
				return rd.finishField(true, false), true, nil
			}
			// A lone enclosing character inside the field is data.
		}
		if sawEscapeN {
			sawEscapeN = false
		}
		rd.field = append(rd.field, c)
	}
}

func (rd *loadDataReader) finishField(enclosed, escapeN bool) loadField {
	if escapeN && len(rd.field) == 1 {
		return loadField{null: true}
	}
	if !enclosed && rd.enclose != 0 && string(rd.field) == "NULL" {
		return loadField{null: true}
	}
	return loadField{text: string(rd.field)}
}
