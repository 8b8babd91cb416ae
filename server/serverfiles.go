package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// Server-side files: SELECT ... INTO OUTFILE/DUMPFILE, LOAD DATA INFILE
// and LOAD_FILE reach the files folder only (secure_file_priv), and only
// for accounts with the FILE privilege, as in MySQL. The engine neither
// checks the privilege nor confines paths reliably: it compares path
// strings by prefix ("files/sqlx" passes for "files/sql") and follows
// symbolic links out of the folder. Here a path is cleaned, its symbolic
// links resolved, and the result must lie inside the folder; the engine
// then gets the resolved path. A relative path is taken from the folder.

// errOutsideFiles is MySQL's error for a path outside secure_file_priv.
var errOutsideFiles = mysql.NewSQLError(mysql.EROptionPreventsStatement, mysql.SSUnknownSQLState,
	"The MySQL server is running with the --secure-file-priv option so it cannot execute this statement")

// resolvePath returns path, taken from the files folder when relative,
// cleaned and with the symbolic links of its existing part resolved.
// With leaf false the last element is not resolved (a file about to be
// created must not exist; the engine creates it exclusively, which does
// not follow a link either).
func (p *policy) resolvePath(path string, leaf bool) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.files, path)
	}
	path = filepath.Clean(path)
	if !leaf {
		dir, err := resolveExisting(filepath.Dir(path))
		return filepath.Join(dir, filepath.Base(path)), err
	}
	return resolveExisting(path)
}

// resolveExisting resolves the symbolic links of path's longest existing
// prefix and appends the rest unchanged.
func resolveExisting(path string) (string, error) {
	r, err := filepath.EvalSymlinks(path)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(path)
	if parent == path {
		return path, nil
	}
	r, err = resolveExisting(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(r, filepath.Base(path)), nil
}

// inside reports whether the resolved path lies in the files folder.
func (p *policy) inside(path string) bool {
	rel, err := filepath.Rel(p.files, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// confine checks the FILE privilege and returns the resolved path of a
// file the statement reads (leaf true) or creates.
func (p *policy) confine(ctx *gsql.Context, path string, leaf bool) (string, error) {
	if !p.hasGlobal(ctx, gsql.PrivilegeType_File) {
		return "", p.fileDenied(ctx)
	}
	r, err := p.resolvePath(path, leaf)
	if err != nil {
		return "", fmt.Errorf("resolving %q: %w", path, err)
	}
	if !p.inside(r) {
		return "", errOutsideFiles
	}
	return r, nil
}

// checkInto confines SELECT ... INTO OUTFILE and INTO DUMPFILE.
func (p *policy) checkInto(ctx *gsql.Context, n *plan.Into) (gsql.Node, transform.TreeIdentity, error) {
	if n.Outfile == "" && n.Dumpfile == "" {
		return n, transform.SameTree, nil
	}
	c := *n
	var err error
	if c.Outfile != "" {
		c.Outfile, err = p.confine(ctx, c.Outfile, false)
	} else {
		c.Dumpfile, err = p.confine(ctx, c.Dumpfile, false)
	}
	if err != nil {
		return n, transform.SameTree, err
	}
	return &c, transform.NewTree, nil
}

// checkLoadData confines LOAD DATA INFILE. LOAD DATA LOCAL reads the
// client's file and needs no privilege.
func (p *policy) checkLoadData(ctx *gsql.Context, n *plan.LoadData) (gsql.Node, transform.TreeIdentity, error) {
	if n.Local {
		return n, transform.SameTree, nil
	}
	r, err := p.confine(ctx, n.File, true)
	if err != nil {
		return n, transform.SameTree, err
	}
	c := *n
	c.File = r
	return &c, transform.NewTree, nil
}

// checkLoadDataInsert checks that the account may insert into the table
// LOAD DATA loads, and delete from it for REPLACE: the engine requires
// FILE only, and grantsAuth leaves even that to checkLoadData. The
// refusal names the privileges missing, as MySQL's does ("DELETE" for an
// account holding INSERT, "INSERT, DELETE" for one holding neither).
func (p *policy) checkLoadDataInsert(ctx *gsql.Context, n *plan.InsertInto) error {
	ld, ok := n.Source.(*plan.LoadData)
	if !ok || len(ld.DestSch) == 0 || p.db == nil || !p.db.Enabled() {
		return nil
	}
	db, table := ld.DestSch[0].DatabaseSource, ld.DestSch[0].Source
	if n.Database() != nil {
		db = n.Database().Name()
	}
	subject := gsql.PrivilegeCheckSubject{Database: db, Table: table}
	var missing []string
	if !p.db.UserHasPrivileges(ctx, gsql.NewPrivilegedOperation(subject, gsql.PrivilegeType_Insert)) {
		missing = append(missing, "INSERT")
	}
	if ld.IsReplace && !p.db.UserHasPrivileges(ctx, gsql.NewPrivilegedOperation(subject, gsql.PrivilegeType_Delete)) {
		missing = append(missing, "DELETE")
	}
	if len(missing) == 0 {
		return nil
	}
	return deniedOnTable(ctx, strings.Join(missing, ", "), table)
}

// loadFile is LOAD_FILE as MySQL has it, in place of the engine's: NULL
// without the FILE privilege, for a file outside the folder, one that
// cannot be read, or one larger than the server's max_allowed_packet.
type loadFile struct {
	arg gsql.Expression
	p   *policy
}

var _ gsql.Expression = (*loadFile)(nil)

// Resolved implements sql.Expression.
func (l *loadFile) Resolved() bool { return l.arg.Resolved() }

// String implements sql.Expression.
func (l *loadFile) String() string { return fmt.Sprintf("load_file(%s)", l.arg) }

// Type implements sql.Expression.
func (l *loadFile) Type() gsql.Type { return types.LongBlob }

// IsNullable implements sql.Expression.
func (l *loadFile) IsNullable() bool { return true }

// Children implements sql.Expression.
func (l *loadFile) Children() []gsql.Expression { return []gsql.Expression{l.arg} }

// WithChildren implements sql.Expression.
func (l *loadFile) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(l, len(children), 1)
	}
	return &loadFile{arg: children[0], p: l.p}, nil
}

// CollationCoercibility implements sql.CollationCoercible.
func (l *loadFile) CollationCoercibility(*gsql.Context) (gsql.CollationID, byte) {
	return gsql.Collation_binary, 5
}

// Eval implements sql.Expression.
func (l *loadFile) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := l.arg.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	conv, _, err := types.LongText.Convert(ctx, v)
	if err != nil {
		return nil, err
	}
	name, ok := conv.(string)
	if !ok {
		return nil, nil
	}
	path, err := l.p.confine(ctx, name, true)
	if err != nil {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > int64(l.p.s.cfg.MaxAllowedPacket) {
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(l.p.s.cfg.MaxAllowedPacket)+1))
	if err != nil || len(data) > l.p.s.cfg.MaxAllowedPacket {
		return nil, nil
	}
	return data, nil
}

// erTableAccessDenied is MySQL's ER_TABLEACCESS_DENIED_ERROR.
const erTableAccessDenied = 1142
