package sqlstore

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

// Duplicate-index warnings.
//
// MySQL warns 1831 ("Duplicate index 'i' defined on the table 'db.t'")
// when a new index repeats another of its table: the same columns in the
// same order, the same prefix lengths, and the same kind (MariaDB, the
// oracle here, leaves UNIQUE (a) beside KEY (a) alone). GMS raises it after
// CreateIndex for any two indexes with the same number of columns, so
// `KEY (a), KEY (b)` warned, and every dump reload with two indexes did.
// CreateIndex, which knows the definitions, notes the genuine duplicates
// on the session; Session.Warn lets GMS's 1831 through only for those.

// duplicatesIndex reports whether ir repeats another secondary index of rec.
func duplicatesIndex(rec *tableRecord, ir indexRecord) bool {
	for _, o := range rec.Indexes {
		if o.Vector || ir.Vector || o.Unique != ir.Unique || len(o.Columns) != len(ir.Columns) {
			continue
		}
		same := true
		for i, c := range o.Columns {
			if !strings.EqualFold(c.Name, ir.Columns[i].Name) || c.Length != ir.Columns[i].Length {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

// noteDuplicateIndex records that the index name, just created, repeats
// another one: GMS's 1831 for it is kept.
func (s *Session) noteDuplicateIndex(name string) {
	if s.dupIndexes == nil {
		s.dupIndexes = make(map[string]struct{})
	}
	s.dupIndexes[strings.ToLower(name)] = struct{}{}
}

// keepDuplicateIndexWarning reports whether GMS's 1831 warning w names an
// index CreateIndex found to be a duplicate, and forgets that index.
func (s *Session) keepDuplicateIndexWarning(w *sql.Warning) bool {
	const lead, tail = "Duplicate index '", "' defined on the table '"
	msg, ok := strings.CutPrefix(w.Message, lead)
	if !ok {
		return true // not GMS's wording: not ours to judge
	}
	i := strings.Index(msg, tail)
	if i < 0 {
		return true
	}
	name := strings.ToLower(msg[:i])
	if _, ok := s.dupIndexes[name]; !ok {
		return false
	}
	delete(s.dupIndexes, name)
	return true
}
