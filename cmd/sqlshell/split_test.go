package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitter(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []statement
	}{
		{"one", "SELECT 1;", []statement{{"SELECT 1", 1, termDelimiter}}},
		{"two on a line", "SELECT 1; SELECT 2;", []statement{{"SELECT 1", 1, termDelimiter}, {"SELECT 2", 1, termDelimiter}}},
		{"multi-line", "SELECT\n  1\n;", []statement{{"SELECT\n  1", 1, termDelimiter}}},
		{"quotes", "SELECT 'a;b', \"c;d\", `e;f`, 'it''s', 'x\\'y;';", []statement{{"SELECT 'a;b', \"c;d\", `e;f`, 'it''s', 'x\\'y;'", 1, termDelimiter}}},
		{"quote over lines", "SELECT 'a\n;b';", []statement{{"SELECT 'a\n;b'", 1, termDelimiter}}},
		{"comments", "-- hello;\n# hash;\nSELECT /* c; */ 1; -- tail", []statement{{"SELECT  1", 3, termDelimiter}}},
		{"executable comment kept", "/*!40101 SET NAMES utf8 */;", []statement{{"/*!40101 SET NAMES utf8 */", 1, termDelimiter}}},
		{"vertical", "SELECT 1\\G", []statement{{"SELECT 1", 1, termVertical}}},
		{"no delimiter", "SELECT 1", []statement{{"SELECT 1", 1, termEOF}}},
		{"empty statements", ";;\n  ;", nil},
		{"delimiter", "DELIMITER //\nCREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW BEGIN SET @a = 1; END//\nDELIMITER ;\nSELECT 1;",
			[]statement{{"CREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW BEGIN SET @a = 1; END", 2, termDelimiter}, {"SELECT 1", 4, termDelimiter}}},
		{"minus is not a comment", "SELECT 1--1;", []statement{{"SELECT 1--1", 1, termDelimiter}}},
		{"comment separates tokens", "SELECT 1/* c */AS x;", []statement{{"SELECT 1 AS x", 1, termDelimiter}}},
		{"empty comment separates strings", "SELECT 'a'/**/'b' AS y;", []statement{{"SELECT 'a' 'b' AS y", 1, termDelimiter}}},
		{"comment over lines separates tokens", "SELECT 1/* c\n d */AS x;", []statement{{"SELECT 1 AS x", 1, termDelimiter}}},
		{"comment at the start", "/* c */SELECT 1;", []statement{{"SELECT 1", 1, termDelimiter}}},
		{"line comments end their line", "SELECT 1-- c\nAS x# d\n, 2;", []statement{{"SELECT 1\nAS x\n, 2", 1, termDelimiter}}},
		{"executable comment kept inline", "SELECT 1/*!AS x*/;", []statement{{"SELECT 1/*!AS x*/", 1, termDelimiter}}},
		{"command", "\\s", []statement{{"\\s ", 1, termCommand}}},
		{"command with an argument", "\\u  shop ", []statement{{"\\u shop", 1, termCommand}}},
		{"command inside a statement", "SELECT 1 \\s\n;", []statement{{"\\s ", 1, termCommand}, {"SELECT 1", 1, termDelimiter}}},
		{"backslash in quotes", "SELECT '\\s';", []statement{{"SELECT '\\s'", 1, termDelimiter}}},
		{"long command", "status;", []statement{{"\\s ", 1, termCommand}}},
		{"long command with an argument", "use shop;", []statement{{"\\u shop", 1, termCommand}}},
		{"use with more on the line is SQL", "use shop; SELECT 1;", []statement{{"use shop", 1, termDelimiter}, {"SELECT 1", 1, termDelimiter}}},
		{"long name inside a statement", "SELECT\nstatus;", []statement{{"SELECT\nstatus", 1, termDelimiter}}},
		{"quit inside a statement", "SELECT 1,\nquit", []statement{{"\\q ", 2, termCommand}, {"SELECT 1,", 1, termEOF}}},
		{"unknown command drops the statement", "SELECT 1 \\z more\nSELECT 2;", []statement{{"\\z ", 1, termCommand}, {"SELECT 2", 2, termDelimiter}}},
		{"help", "\\h", []statement{{"\\? ", 1, termCommand}}},
		{"go without a statement", "go", []statement{{"\\g ", 1, termCommand}}},
		{"psql command", "\\dt", []statement{{"\\dt ", 1, termCommand}}},
		{"psql command drops the statement", "SELECT 1 \\d+ t;\nSELECT 2;", []statement{{"\\d+ ", 1, termCommand}, {"SELECT 2", 2, termDelimiter}}},
		{"lone backslash", "SELECT 1 \\", []statement{{"\\ ", 1, termCommand}}},
		{"dot command", ".tables", []statement{{".tables ", 1, termCommand}}},
		{"clear", "SELECT 1 \\c SELECT 2;", []statement{{"SELECT 2", 1, termDelimiter}}},
		{"delimiter command", "\\d //\nSELECT 1; SELECT 2//", []statement{{"SELECT 1; SELECT 2", 2, termDelimiter}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSplitter()
			var got []statement
			for _, line := range strings.Split(tc.input, "\n") {
				got = append(got, s.add(line)...)
			}
			got = append(got, s.finish()...)
			require.Equal(t, tc.want, got)
		})
	}
}
