package main

import (
	"strings"
	"unicode/utf8"
)

// terminator says how a statement ended, which picks its output format.
type terminator int

const (
	termDelimiter terminator = iota // ; (or the DELIMITER in force)
	termVertical                    // \G: one column per line
	termEOF                         // the input ended without a delimiter
	termCommand                     // a client command (commands.go): text is its name, a space and its argument
)

// statement is one complete statement of the input.
type statement struct {
	text string     // without its terminator
	line int        // the input line it starts on, from 1
	term terminator // how it ended
}

// splitter cuts input lines into statements the way the mysql client does:
// statements end at the delimiter (";", changed with a DELIMITER line) or
// at \G, outside quotes ('...', "...", `...`) and comments (-- and # to the
// end of the line, /* ... */). Comments that are not MySQL's executable
// /*! ... */ kind (or an optimizer hint, /*+ ... */) are dropped, and
// leave a space between the tokens they separated (a line comment leaves
// its line's end). Outside quotes and comments a backslash starts one of
// the mysql client's commands (\u db, \s, ...), and so does a line that
// starts with a command's long name (use db, status, ...) or a dot (an
// unknown command: sqlite3's .tables) while no statement is gathered;
// exit and quit leave even then. Commands come out in order with the
// statements, with term termCommand; they leave the statement being
// gathered as it is, except \c and an unknown command, which drop it. Feed lines in order with
// add; a splitter is not safe for concurrent use.
type splitter struct {
	delim   string
	buf     strings.Builder
	start   int  // line of the statement being gathered, 0 when none
	line    int  // lines added so far
	quote   byte // open quote character, 0 when none
	comment bool // inside /* ... */
	keepCmt bool // the open comment is /*! ... */ and stays in the text
}

func newSplitter() *splitter { return &splitter{delim: ";"} }

// pending reports whether a statement is partly gathered (the prompt then
// shows a continuation).
func (s *splitter) pending() bool { return s.start != 0 || s.quote != 0 || s.comment }

// reset drops a partly gathered statement (Ctrl-C at the prompt).
func (s *splitter) reset() {
	s.buf.Reset()
	s.start, s.quote, s.comment, s.keepCmt = 0, 0, false, false
}

// add consumes one line (without its newline) and returns the statements
// it completes.
func (s *splitter) add(line string) []statement {
	s.line++
	if !s.pending() {
		if t := strings.TrimSpace(line); len(t) > len("delimiter") && strings.EqualFold(t[:len("delimiter")], "delimiter") &&
			(t[len("delimiter")] == ' ' || t[len("delimiter")] == '\t') {
			if d := strings.TrimSpace(t[len("delimiter"):]); d != "" {
				s.delim = d
			}
			return nil
		}
	}
	var out []statement
	if s.quote == 0 && !s.comment {
		if name, arg, ok := longCommand(line, s.pending()); ok {
			return append(out, statement{text: name + " " + arg, line: s.line, term: termCommand})
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case s.comment:
			if c == '*' && i+1 < len(line) && line[i+1] == '/' {
				if s.keepCmt {
					s.buf.WriteString("*/")
				}
				s.comment, s.keepCmt = false, false
				i++
			} else if s.keepCmt {
				s.buf.WriteByte(c)
			}
			continue
		case s.quote != 0:
			s.buf.WriteByte(c)
			if c == '\\' && s.quote != '`' && i+1 < len(line) {
				i++
				s.buf.WriteByte(line[i])
			} else if c == s.quote {
				s.quote = 0
			}
			continue
		}
		if strings.HasPrefix(line[i:], s.delim) {
			out = s.emit(out, termDelimiter)
			i += len(s.delim) - 1
			continue
		}
		switch {
		case c == '\\' && i+1 < len(line) && (line[i+1] == 'G' || line[i+1] == 'g'):
			if line[i+1] == 'G' {
				out = s.emit(out, termVertical)
			} else {
				out = s.emit(out, termDelimiter)
			}
			i++
		case c == '\\':
			var cmd statement
			cmd, i = s.backslash(line, i)
			if cmd.text != "" {
				out = append(out, cmd)
			}
		case c == '\'' || c == '"' || c == '`':
			s.begin()
			s.quote = c
			s.buf.WriteByte(c)
		case c == '#' || (c == '-' && strings.HasPrefix(line[i:], "--") && (i+2 == len(line) || line[i+2] == ' ' || line[i+2] == '\t')):
			i = len(line) // a comment to the end of the line
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			s.comment = true
			s.keepCmt = i+2 < len(line) && (line[i+2] == '!' || line[i+2] == '+')
			if s.keepCmt {
				s.begin()
				s.buf.WriteString("/*")
			} else if s.start != 0 && !endsInSpace(&s.buf) {
				// A comment separates tokens as a space does:
				// 1/* c */AS x is 1 AS x, not 1AS x, and 'a'/**/'b' two
				// adjacent strings, not one with a quote inside.
				s.buf.WriteByte(' ')
			}
			i++
		default:
			if s.start == 0 && (c == ' ' || c == '\t' || c == '\r') {
				continue
			}
			s.begin()
			s.buf.WriteByte(c)
		}
	}
	if s.start != 0 && (!s.comment || s.keepCmt) {
		// (A dropped comment open over the line end already left its
		// space.)
		s.buf.WriteByte('\n')
	}
	return out
}

// backslash reads the command whose backslash is line[i] and returns it
// (text "" when the splitter carried it out itself) and the index of its
// last byte. A command with an argument takes the rest of the line.
func (s *splitter) backslash(line string, i int) (statement, int) {
	cmd := statement{line: s.line, term: termCommand}
	if i+1 == len(line) {
		return s.unknown(cmd, `\`), len(line)
	}
	c := line[i+1]
	if c >= utf8.RuneSelf {
		_, size := utf8.DecodeRuneInString(line[i+1:])
		return s.unknown(cmd, line[i:i+1+size]), len(line)
	}
	name := `\` + string(c)
	if c == 'h' {
		name = `\?` // mysql's other name for help
	}
	if c == 'd' && i+2 < len(line) && isWordByte(line[i+2]) {
		// \dt, \d+: psql's commands, not \d with an argument.
		j := i + 2
		for j < len(line) && isWordByte(line[j]) {
			j++
		}
		return s.unknown(cmd, line[i:j]), len(line)
	}
	switch c {
	case 'c':
		s.buf.Reset()
		s.start = 0
		return statement{}, i + 1
	case 'd':
		arg := strings.TrimSpace(line[i+2:])
		if arg != "" {
			s.delim = arg
			return statement{}, len(line)
		}
		cmd.text = name + " "
		return cmd, len(line)
	}
	switch c := commandByName(name); {
	case c == nil:
		return s.unknown(cmd, name), len(line)
	case c.arg:
		arg := line[i+2:]
		if name == `\R` {
			arg = strings.TrimLeft(arg, " \t") // a prompt may end in spaces
		} else {
			arg = strings.TrimSpace(arg)
		}
		cmd.text = name + " " + arg
		return cmd, len(line)
	}
	cmd.text = name + " "
	return cmd, i + 1
}

// unknown returns the unknown command name, which fails at once: the
// statement being typed and the rest of the line go with it, so that
// neither turns the next statement into a syntax error.
func (s *splitter) unknown(cmd statement, name string) statement {
	s.buf.Reset()
	s.start = 0
	cmd.text = name + " "
	return cmd
}

func isWordByte(c byte) bool {
	return c == '_' || c == '+' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// endsInSpace reports whether b's text ends in white space.
func endsInSpace(b *strings.Builder) bool {
	t := b.String()
	if t == "" {
		return false
	}
	switch t[len(t)-1] {
	case ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func (s *splitter) begin() {
	if s.start == 0 {
		s.start = s.line
	}
}

func (s *splitter) emit(out []statement, t terminator) []statement {
	text := strings.TrimSpace(s.buf.String())
	if text != "" {
		out = append(out, statement{text: text, line: s.start, term: t})
	}
	s.buf.Reset()
	s.start = 0
	return out
}

// finish returns the statement left at the end of the input, if any.
func (s *splitter) finish() []statement {
	if strings.TrimSpace(s.buf.String()) == "" {
		s.reset()
		return nil
	}
	out := s.emit(nil, termEOF)
	s.reset()
	return out
}
