package sqlstore

import (
	"context"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/strata-db/strata/sqlstore/codec"
)

// Row values. A table's rows are stored with codec.AppendRow over the
// table's storage schema: its schema with every spatial column (which the
// codec does not know) replaced by a LONGBLOB holding the value's EWKB
// serialization (GeometryValue.Serialize), turned back into a geometry
// value by the column's type when decoded.

// storageSchema returns the schema rows are encoded with, and the ordinals
// of the spatial columns (nil when there are none).
func storageSchema(sch sql.Schema) (sql.Schema, []int) {
	var spatial []int
	for i, c := range sch {
		if _, ok := c.Type.(sql.SpatialColumnType); ok {
			spatial = append(spatial, i)
		}
	}
	if spatial == nil {
		return sch, nil
	}
	st := make(sql.Schema, len(sch))
	copy(st, sch)
	for _, i := range spatial {
		c := *sch[i]
		c.Type = types.LongBlob
		st[i] = &c
	}
	return st, spatial
}

// encodeRow appends the stored value of a full row.
func (d *tableDef) encodeRow(dst []byte, row sql.Row) ([]byte, error) {
	if d.jsonCols != nil {
		r := append(sql.Row(nil), row...)
		for _, i := range d.jsonCols {
			r[i] = jsonForStorage(r[i])
		}
		row = r
	}
	if d.spatial != nil {
		r := append(sql.Row(nil), row...)
		for _, i := range d.spatial {
			if r[i] == nil {
				continue
			}
			g, ok := r[i].(types.GeometryValue)
			if !ok {
				return dst, fmt.Errorf("%w: column %s: %T is not a geometry", codec.ErrInvalidValue, d.schema[i].Name, r[i])
			}
			r[i] = g.Serialize()
		}
		row = r
	}
	return codec.AppendRow(dst, d.storage, row)
}

// decodeRow decodes a stored row into dst (reused when large enough), or,
// when dst is nil and a is not, into memory from a.
func (d *tableDef) decodeRow(value []byte, dst sql.Row, a *codec.Arena) (sql.Row, error) {
	var row sql.Row
	var err error
	if dst == nil && a != nil {
		row, err = a.DecodeRow(value, d.storage)
	} else {
		row, err = codec.DecodeRow(value, d.storage, dst)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlstore: table %s: %w", d.name, err)
	}
	for _, i := range d.spatial {
		if row[i], err = d.geometry(i, row[i]); err != nil {
			return nil, err
		}
	}
	for _, i := range d.jsonCols {
		row[i] = jsonFromStorage(row[i])
	}
	return row, nil
}

// decodeColumns decodes the columns with ordinals cols of a stored row,
// into memory from a when it is not nil.
func (d *tableDef) decodeColumns(value []byte, cols []int, a *codec.Arena) (sql.Row, error) {
	var row sql.Row
	var err error
	if a != nil {
		row, err = a.DecodeRowColumns(value, d.storage, cols)
	} else {
		row, err = codec.DecodeRowColumns(value, d.storage, cols, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlstore: table %s: %w", d.name, err)
	}
	if d.spatial != nil || d.jsonCols != nil {
		for j, o := range cols {
			if row[j], err = d.geometry(o, row[j]); err != nil {
				return nil, err
			}
			if types.IsJSON(d.schema[o].Type) {
				row[j] = jsonFromStorage(row[j])
			}
		}
	}
	return row, nil
}

// geometry turns the stored bytes of column i back into its value; other
// columns pass through.
func (d *tableDef) geometry(i int, v any) (any, error) {
	b, ok := v.([]byte)
	if !ok || v == nil {
		return v, nil
	}
	if _, spatial := d.schema[i].Type.(sql.SpatialColumnType); !spatial {
		return v, nil
	}
	g, _, err := types.GeometryType{}.Convert(context.Background(), b)
	if err != nil {
		return nil, fmt.Errorf("%w: table %s column %s: %v", codec.ErrCorrupt, d.name, d.schema[i].Name, err)
	}
	return g, nil
}
