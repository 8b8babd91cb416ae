package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/strata-db/strata/sqlstore"
)

// format is how results are printed.
type format int

const (
	formatTable    format = iota // boxed, aligned columns (a terminal, or --table)
	formatTabs                   // tab-separated with a header line (not a terminal)
	formatVertical               // one "column: value" line per column (\G, --vertical)
)

// printer writes results. interactive adds the row count and time lines
// the mysql client prints at a terminal.
type printer struct {
	w           io.Writer
	interactive bool
	noHeader    bool
}

func (p *printer) print(res *result, f format) {
	if res.ok == nil && len(res.cols) == 0 {
		res.ok = &sqlstore.Result{} // SET and friends: no result set
	}
	switch {
	case res.ok != nil:
		if p.interactive {
			p.printOK(res)
		}
		return
	case f == formatVertical:
		p.vertical(res)
	case f == formatTabs:
		p.tabs(res)
	default:
		if len(res.rows) > 0 {
			p.table(res)
		}
	}
	if p.interactive {
		switch n := len(res.rows); n {
		case 0:
			fmt.Fprintf(p.w, "Empty set%s (%s)\n", p.warnings(res), seconds(res))
		default:
			fmt.Fprintf(p.w, "%d %s in set%s (%s)\n", n, plural(n, "row", "rows"), p.warnings(res), seconds(res))
		}
		fmt.Fprintln(p.w)
	}
}

func (p *printer) printOK(res *result) {
	n := int(res.ok.RowsAffected)
	fmt.Fprintf(p.w, "Query OK, %d %s affected%s (%s)\n", n, plural(n, "row", "rows"), p.warnings(res), seconds(res))
	if res.ok.Info != "" {
		fmt.Fprintln(p.w, res.ok.Info)
	}
	fmt.Fprintln(p.w)
}

func (p *printer) warnings(res *result) string {
	if res.warnings == 0 {
		return ""
	}
	return fmt.Sprintf(", %d %s", res.warnings, plural(int(res.warnings), "warning", "warnings"))
}

func seconds(res *result) string { return fmt.Sprintf("%.2f sec", res.elapsed.Seconds()) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func cell(v *string) string {
	if v == nil {
		return "NULL"
	}
	return *v
}

func width(s string) int { return displayWidth(s) }

// table prints the mysql client's boxed table.
func (p *printer) table(res *result) {
	widths := make([]int, len(res.cols))
	for i, c := range res.cols {
		widths[i] = width(c)
	}
	for _, row := range res.rows {
		for i, v := range row {
			widths[i] = max(widths[i], width(cell(v)))
		}
	}
	var sep strings.Builder
	sep.WriteByte('+')
	for _, w := range widths {
		sep.WriteString(strings.Repeat("-", w+2))
		sep.WriteByte('+')
	}
	line := func(vals []string, right func(int) bool) {
		var b strings.Builder
		b.WriteByte('|')
		for i, v := range vals {
			pad := strings.Repeat(" ", widths[i]-width(v))
			if right(i) {
				b.WriteString(" " + pad + v + " |")
			} else {
				b.WriteString(" " + v + pad + " |")
			}
		}
		fmt.Fprintln(p.w, b.String())
	}
	fmt.Fprintln(p.w, sep.String())
	line(res.cols, func(int) bool { return false })
	fmt.Fprintln(p.w, sep.String())
	vals := make([]string, len(res.cols))
	for _, row := range res.rows {
		for i, v := range row {
			vals[i] = cell(v)
		}
		line(vals, func(i int) bool { return res.numeric[i] })
	}
	fmt.Fprintln(p.w, sep.String())
}

// tabs prints mysql's batch format: tab-separated, with \t, \n and \\
// escaped, NULL as NULL.
func (p *printer) tabs(res *result) {
	esc := strings.NewReplacer("\\", "\\\\", "\t", "\\t", "\n", "\\n", "\x00", "\\0")
	if !p.noHeader {
		fmt.Fprintln(p.w, strings.Join(res.cols, "\t"))
	}
	vals := make([]string, len(res.cols))
	for _, row := range res.rows {
		for i, v := range row {
			if v == nil {
				vals[i] = "NULL"
			} else {
				vals[i] = esc.Replace(*v)
			}
		}
		fmt.Fprintln(p.w, strings.Join(vals, "\t"))
	}
}

// vertical prints one block per row, as the mysql client does for \G.
func (p *printer) vertical(res *result) {
	w := 0
	for _, c := range res.cols {
		w = max(w, width(c))
	}
	for n, row := range res.rows {
		fmt.Fprintf(p.w, "%s %d. row %s\n", strings.Repeat("*", 27), n+1, strings.Repeat("*", 27))
		for i, v := range row {
			fmt.Fprintf(p.w, "%s%s: %s\n", strings.Repeat(" ", w-width(res.cols[i])), res.cols[i], cell(v))
		}
	}
}
