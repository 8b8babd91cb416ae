package server

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/sirupsen/logrus"
)

// The server's log takes lines from the protocol layer and the engine,
// which put text from clients in them: statements, user and database
// names. Written as they are, a newline in such text forges a line, and a
// statement of max_allowed_packet makes a line of that size (the engine
// logs a statement that fails to prepare in full). Both are bounded here:
// control characters are escaped and long texts cut.

// maxLogText is the most of a client's text (a statement, a name) that a
// log line shows.
const maxLogText = 1 << 10

// maxLogLine is the longest line the protocol layer may log.
const maxLogLine = 4 << 10

// droppedLogLine reports whether a line the protocol layer logs is left
// out of the server's log: its line for a failed login names the user raw,
// and login logs it quoted instead.
func droppedLogLine(line string) bool {
	return strings.HasPrefix(line, "Error authenticating user ")
}

// logLine writes a line of the protocol layer to the server's log, unless
// droppedLogLine drops it. Its control characters are escaped: the layer
// puts text that clients send (database names, statements in errors) in
// its lines, and a newline there would start a forged line.
func logLine(line string) {
	line = strings.TrimSuffix(line, "\n")
	if droppedLogLine(line) {
		return
	}
	logSink.Load().Print(escapeControl(cut(line, maxLogLine)))
}

// escapeControl returns s with its control characters written as Go
// escapes (a newline as \n), and s itself when it has none.
func escapeControl(s string) string {
	i := strings.IndexFunc(s, unicode.IsControl)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cut returns s, or its first max bytes and a note of its length.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return s[:max] + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// boundedFormatter formats the engine's log entries as logrus's text
// formatter does (which quotes values with control characters), with
// every text cut to maxLogText.
type boundedFormatter struct{ logrus.TextFormatter }

// Format implements logrus.Formatter.
func (f *boundedFormatter) Format(e *logrus.Entry) ([]byte, error) {
	long := len(e.Message) > maxLogText
	for _, v := range e.Data {
		if s, ok := v.(string); ok && len(s) > maxLogText {
			long = true
		}
	}
	if long {
		c := *e
		c.Message = cut(e.Message, maxLogText)
		c.Data = make(logrus.Fields, len(e.Data))
		for k, v := range e.Data {
			if s, ok := v.(string); ok {
				v = cut(s, maxLogText)
			}
			c.Data[k] = v
		}
		e = &c
	}
	return f.TextFormatter.Format(e)
}
