package main

import (
	"bufio"
	"io"
)

// lineReader reads input lines without their line ends.
type lineReader struct{ r *bufio.Reader }

func newLineReader(src io.Reader) *lineReader { return &lineReader{bufio.NewReader(src)} }

// next returns the next line; at the end of the input it returns the
// last, unterminated line (perhaps "") with io.EOF.
func (l *lineReader) next() (string, error) {
	line, err := l.r.ReadString('\n')
	return trimNewline(line), err
}

func trimNewline(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		s = s[:n-1]
		if n := len(s); n > 0 && s[n-1] == '\r' {
			s = s[:n-1]
		}
	}
	return s
}
