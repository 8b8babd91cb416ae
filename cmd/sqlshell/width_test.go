package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDisplayWidth(t *testing.T) {
	for s, want := range map[string]int{
		"":           0,
		"abc":        3,
		"café":       4,
		"cafe\u0301": 4, // e and a combining acute accent
		"漢字":         4,
		"한국어":        6,
		"ｱｲ":         2, // halfwidth katakana
		"Ａ":          2, // fullwidth A
		"😀x":         3,
		"\u200bx":    1, // zero width space
	} {
		require.Equal(t, want, displayWidth(s), "%q", s)
	}
}

func TestSyntaxErrorCaret(t *testing.T) {
	e := syntaxErr{src: "\tWHERE 漢 = = 1", col: 12} // the second =
	require.Equal(t, "\tWHERE 漢 = = 1\n\t"+strings.Repeat(" ", 11)+"^", e.caret())
}
