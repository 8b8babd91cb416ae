package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Prepared-statement commands answered below the protocol layer
//
// The protocol layer (vitess's mysql.Conn) mishandles some prepared-
// statement commands before any handler of ours is called:
//
//   - COM_STMT_PREPARE of LOAD DATA: its walk counting placeholders meets a
//     nil node of the parsed LOAD DATA and panics; the panic is recovered by
//     closing the connection. MySQL answers 1295 and keeps it.
//   - COM_STMT_RESET of an unknown statement: the error packet is written,
//     then the missing statement is dereferenced (a panic, the connection
//     closed); of a payload too short for a statement ID, two answers.
//   - COM_STMT_SEND_LONG_DATA of an unknown statement or parameter: the
//     connection is closed. MySQL answers nothing (the command has no
//     response) and keeps it.
//   - COM_FIELD_LIST without the NUL that ends its table name: the
//     connection is closed (here: 1835; fieldlist.go has its error's
//     stray EOF packet).
//
// The parser panics too, for every command with a statement text: on an
// executable comment whose body is a version of at most five digits and
// nothing else ("/*!*/", "/*!80000*/"), in COM_QUERY (a session reset, as
// for any panic in a statement) and COM_STMT_PREPARE (the connection
// closed). Such a comment holds no text, so MySQL runs the statement as
// without it; here its '!' is overwritten with a space in the command as
// read, making it the plain comment it amounts to.
//
// The listener's connection reader sees each command before the protocol
// layer does (limitConn.Read; over TLS, once the client has logged in,
// tlsFramed.Read), and answers these there, as MySQL does; the protocol
// layer never sees them. A command is completed before it is looked at
// and handed over alone (atCommand), however the client's writes were
// cut into reads. Only a command larger than the protocol layer's read
// buffer (16 KiB), or one over TLS when the reader could not be placed
// above the encryption, reaches the protocol layer unseen.
//
// Beyond LOAD DATA, COM_STMT_PREPARE is refused (1295) for the statements
// MySQL 8 refuses in the prepared-statement protocol
// (sql_prepare.cc, Prepared_statement::prepare_query), which GMS would
// prepare and run in ways that differ from their text forms or fail late:
// PREPARE, EXECUTE and DEALLOCATE themselves, LOCK and UNLOCK, savepoints,
// XA, USE, HELP, HANDLER, GET DIAGNOSTICS, SIGNAL and RESIGNAL, the
// diagnostics statements (SHOW WARNINGS, SHOW ERRORS, SHOW COUNT(*)),
// CHECK TABLE, ALTER DATABASE, ALTER VIEW, and CREATE, ALTER and DROP of
// procedures, functions, triggers and events. BEGIN and START TRANSACTION,
// which MySQL refuses too, stay preparable: the server runs them prepared
// on its fast path, and clients (sysbench's, the server's benchmarks)
// prepare them. See docs/decisions/2026-12-07-prepare-unsupported.md.

// Command bytes of the prepared-statement commands handled here.
const (
	comStmtPrepare      = 0x16
	comStmtSendLongData = 0x18
	comStmtClose        = 0x19
	comStmtReset        = 0x1a
	comSetOption        = 0x1b
)

// MySQL's error numbers for the answers given here.
const (
	erUnsupportedPS      = 1295 // ER_UNSUPPORTED_PS
	erUnknownStmtHandler = 1243 // ER_UNKNOWN_STMT_HANDLER
	erMalformedPacket    = 1835 // ER_MALFORMED_PACKET
	erUnknownComError    = 1047 // ER_UNKNOWN_COM_ERROR
	erWrongArguments     = 1210 // ER_WRONG_ARGUMENTS
)

// msgLongDataRefused is the error an EXECUTE of a statement meets after a
// COM_STMT_SEND_LONG_DATA for a parameter it does not have, as MySQL
// words it (ER_WRONG_ARGUMENTS naming the call that failed).
const msgLongDataRefused = "Incorrect arguments to mysql_stmt_send_long_data"

const msgUnsupportedPS = "This command is not supported in the prepared statement protocol yet"

// answerStmt answers the command whose whole payload is p when it is one
// the protocol layer mishandles: handled reports whether it did (the
// answer, if the command has one, is written), and err is a write error,
// which ends the connection. Called on the connection's goroutine, between
// commands, so the connection's prepared statements are its own to read.
func (c *limitConn) answerStmt(p []byte) (handled bool, err error) {
	if len(p) == 0 || c.mc == nil {
		return false, nil
	}
	switch p[0] {
	case comStmtPrepare:
		if !unsupportedPrepare(p[1:]) {
			return false, nil
		}
		return true, c.answerErr(erUnsupportedPS, msgUnsupportedPS)
	case comStmtReset:
		if len(p) < 5 {
			return true, c.answerErr(erMalformedPacket, "Malformed communication packet.")
		}
		id := binary.LittleEndian.Uint32(p[1:])
		if c.mc.PrepareData[id] != nil {
			delete(c.longDataRefused, id) // a reset clears the statement's error, as MySQL's
			return false, nil
		}
		return true, c.answerErr(erUnknownStmtHandler,
			"Unknown prepared statement handler ("+strconv.FormatUint(uint64(id), 10)+") given to mysqld_stmt_reset")
	case comFieldList:
		if bytes.IndexByte(p[1:], 0) >= 0 {
			return false, nil
		}
		return true, c.answerErr(erMalformedPacket, "Malformed communication packet.")
	case comStmtSendLongData:
		// No answer either way. A chunk for a parameter the statement
		// does not have marks the statement: MySQL fails its next
		// executions with 1210 until it is reset (longDataRefused).
		if len(p) < 7 {
			return true, nil
		}
		id := binary.LittleEndian.Uint32(p[1:])
		prepare := c.mc.PrepareData[id]
		if prepare == nil {
			return true, nil
		}
		if param := binary.LittleEndian.Uint16(p[5:]); prepare.BindVars == nil || param >= prepare.ParamsCount {
			if c.longDataRefused == nil {
				c.longDataRefused = make(map[uint32]struct{})
			}
			c.longDataRefused[id] = struct{}{}
			return true, nil
		}
		return false, nil
	case comStmtExecute:
		if len(p) < 5 {
			return false, nil
		}
		if _, ok := c.longDataRefused[binary.LittleEndian.Uint32(p[1:])]; ok {
			return true, c.answerErr(erWrongArguments, msgLongDataRefused)
		}
		return false, nil
	case comStmtClose:
		if len(p) >= 5 {
			delete(c.longDataRefused, binary.LittleEndian.Uint32(p[1:]))
		}
		return false, nil
	case comSetOption:
		// The protocol layer answers an option other than multiple
		// statements on (0) and off (1) with an ERR packet and then the
		// EOF packet of a success, which the client takes for the answer
		// to its next command. MySQL sends the ERR packet alone.
		if len(p) < 3 {
			return true, c.answerErrState(erMalformedPacket, "HY000", "Malformed communication packet.")
		}
		if op := binary.LittleEndian.Uint16(p[1:]); op > 1 {
			return true, c.answerErrState(erUnknownComError, "08S01", "Unknown command")
		}
		return false, nil
	}
	return false, nil
}

// answerErr writes an ERR packet answering the command just read.
func (c *limitConn) answerErr(code uint16, msg string) error {
	return c.answerErrState(code, "HY000", msg)
}

// answerErrState is answerErr with the SQLSTATE state.
func (c *limitConn) answerErrState(code uint16, state, msg string) error {
	var w io.Writer = c.Conn
	if c.answerTo != nil {
		w = c.answerTo
	}
	_, err := w.Write(errPacket(1, code, state, msg))
	return err
}

// unsupportedPrepare reports whether q, a COM_STMT_PREPARE text, is a
// statement MySQL does not prepare (see above). It reads the leading
// keywords only, with comments skipped and executable comments read as
// text, and allocates nothing.
func unsupportedPrepare(q []byte) bool {
	var lx keywordLexer
	lx.s = q
	first := lx.next()
	switch {
	case first.is("LOAD"):
		return !lx.next().is("INDEX") // LOAD DATA, LOAD XML
	case first.is("PREPARE"), first.is("EXECUTE"), first.is("DEALLOCATE"),
		first.is("LOCK"), first.is("UNLOCK"), first.is("SAVEPOINT"), first.is("RELEASE"),
		first.is("XA"), first.is("USE"), first.is("HELP"), first.is("HANDLER"),
		first.is("GET"), first.is("SIGNAL"), first.is("RESIGNAL"), first.is("CHECK"):
		return true
	case first.is("ROLLBACK"):
		w := lx.next()
		if w.is("WORK") {
			w = lx.next()
		}
		return w.is("TO")
	case first.is("SHOW"):
		w := lx.next()
		return w.is("WARNINGS") || w.is("ERRORS") || w.is("COUNT")
	case first.is("DROP"):
		w := lx.next()
		return w.is("PREPARE") || routineKind(w)
	case first.is("ALTER"):
		for range 12 {
			w := lx.next()
			switch {
			case w.empty(), w.is("TABLE"), w.is("USER"), w.is("INSTANCE"), w.is("TABLESPACE"), w.is("SERVER"), w.is("RESOURCE"), w.is("UNDO"), w.is("LOGFILE"), w.is("ONLINE"), w.is("OFFLINE"), w.is("IGNORE"):
				return false
			case w.is("DATABASE"), w.is("SCHEMA"), w.is("VIEW"), routineKind(w):
				return true
			}
		}
	case first.is("CREATE"):
		// CREATE [DEFINER = user] [AGGREGATE] FUNCTION ..., CREATE
		// [OR REPLACE] [ALGORITHM = ...] ... VIEW: read on to the kind.
		for range 12 {
			w := lx.next()
			switch {
			case w.empty(), w.is("TABLE"), w.is("VIEW"), w.is("INDEX"), w.is("DATABASE"), w.is("SCHEMA"),
				w.is("USER"), w.is("ROLE"), w.is("TEMPORARY"), w.is("UNIQUE"), w.is("FULLTEXT"), w.is("SPATIAL"):
				return false
			case routineKind(w):
				return true
			}
		}
	}
	return false
}

// routineKind reports whether w names a stored program's kind.
func routineKind(w keyword) bool {
	return w.is("PROCEDURE") || w.is("FUNCTION") || w.is("TRIGGER") || w.is("EVENT")
}

// keyword is a token of keywordLexer: a word, or one character of
// punctuation, or empty at the end of the text.
type keyword []byte

func (w keyword) empty() bool { return len(w) == 0 }

// is reports whether w is the keyword k (upper case), in any case.
func (w keyword) is(k string) bool {
	if len(w) != len(k) {
		return false
	}
	for i := range len(w) {
		b := w[i]
		if 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		}
		if b != k[i] {
			return false
		}
	}
	return true
}

// keywordLexer reads the tokens of a statement's text as far as a
// statement's kind shows: words, quoted names and strings (returned as
// one punctuation token), punctuation. Comments are skipped; an
// executable comment's (/*!...*/) text is read, as the server's parser
// reads it.
type keywordLexer struct {
	s []byte
	i int
}

func (lx *keywordLexer) next() keyword {
	s := lx.s
	for lx.i < len(s) {
		b := s[lx.i]
		switch {
		case b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v':
			lx.i++
		case b == '/' && lx.i+2 < len(s) && s[lx.i+1] == '*' && s[lx.i+2] == '!':
			// An executable comment: its version, then its text as text;
			// its closing */ is skipped below.
			lx.i += 3
			for lx.i < len(s) && '0' <= s[lx.i] && s[lx.i] <= '9' {
				lx.i++
			}
		case b == '/' && lx.i+1 < len(s) && s[lx.i+1] == '*':
			end := indexFrom(s, lx.i+2, "*/")
			if end < 0 {
				lx.i = len(s)
			} else {
				lx.i = end + 2
			}
		case b == '*' && lx.i+1 < len(s) && s[lx.i+1] == '/':
			lx.i += 2 // the end of an executable comment
		case b == '#' || b == '-' && lx.i+2 < len(s) && s[lx.i+1] == '-' && (s[lx.i+2] == ' ' || s[lx.i+2] == '\t' || s[lx.i+2] == '\n'):
			end := indexFrom(s, lx.i, "\n")
			if end < 0 {
				lx.i = len(s)
			} else {
				lx.i = end + 1
			}
		case b == '`' || b == '\'' || b == '"':
			start := lx.i
			lx.i++
			for lx.i < len(s) {
				if s[lx.i] == '\\' && b != '`' {
					lx.i += 2
					continue
				}
				if s[lx.i] == b {
					lx.i++
					break
				}
				lx.i++
			}
			lx.i = min(lx.i, len(s))
			return keyword(s[start : start+1])
		case isWordByte(b):
			start := lx.i
			for lx.i < len(s) && isWordByte(s[lx.i]) {
				lx.i++
			}
			return keyword(s[start:lx.i])
		default:
			lx.i++
			return keyword(s[lx.i-1 : lx.i])
		}
	}
	return nil
}

func isWordByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '$' || b >= 0x80
}

// indexFrom returns the index of sep in s at or after from, or -1.
func indexFrom(s []byte, from int, sep string) int {
	for i := from; i+len(sep) <= len(s); i++ {
		if string(s[i:i+len(sep)]) == sep {
			return i
		}
	}
	return -1
}

// answer answers the command b[:n] begins with, whole in b[:n], when
// answerStmt handles it, and returns what the protocol layer reads
// instead (as serve does): the bytes after it, moved to the front of b.
// handled is false when the command is left to the protocol layer.
func (c *limitConn) answer(b []byte, n int) (m int, handled bool, err error) {
	if n < 5 || b[3] != 0 || !c.answers(b[4]) || !c.loggedIn() {
		return n, false, nil
	}
	if st := c.state; st == nil || st.stmt.Load()&1 == 1 {
		return n, false, nil // a command is running: what it reads is its own
	}
	size := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
	if size >= maxChunk || 4+size > n {
		return n, false, nil
	}
	if b[4] == comQueryByte || b[4] == comStmtPrepare {
		defuseVersionComments(b[5 : 4+size])
		if b[4] == comQueryByte {
			return n, false, nil
		}
	}
	handled, err = c.answerStmt(b[4 : 4+size])
	if err != nil {
		return 0, true, err
	}
	if !handled {
		return n, false, nil
	}
	return copy(b, b[4+size:n]), true, nil
}

// answers reports whether a command cmd may be answered, or its text
// changed, by answer: the prepared-statement commands the protocol layer
// mishandles, texts (defuseVersionComments), and EXECUTE and CLOSE of
// statements while one is marked (longDataRefused).
func (c *limitConn) answers(cmd byte) bool {
	switch cmd {
	case comStmtPrepare, comStmtReset, comStmtSendLongData, comQueryByte, comFieldList, comSetOption:
		return true
	case comStmtExecute, comStmtClose:
		return len(c.longDataRefused) > 0
	}
	return false
}

// defuseVersionComments overwrites, in the statement text q, the '!' of
// each executable comment whose body is only a version of at most five
// digits with a space (see above). Strings, quoted names and comments are
// skipped as the parser's tokenizer skips them. It allocates nothing, and
// a text without "/*!" costs one search.
func defuseVersionComments(q []byte) {
	if bytes.Index(q, []byte("/*!")) < 0 {
		return
	}
	for i := 0; i < len(q); {
		switch b := q[i]; {
		case b == '\'' || b == '"' || b == '`':
			i++
			for i < len(q) && q[i] != b {
				if q[i] == '\\' && b != '`' {
					i++
				}
				i++
			}
			i++
		case b == '/' && i+1 < len(q) && q[i+1] == '*':
			end := indexFrom(q, i+2, "*/")
			if end < 0 {
				return // unterminated: the tokenizer fails on it
			}
			if i+2 < end && q[i+2] == '!' && onlyVersion(q[i+3:end]) {
				q[i+2] = ' '
			}
			i = end + 2
		case b == '#' || (b == '-' || b == '/') && i+1 < len(q) && q[i+1] == b:
			end := indexFrom(q, i, "\n")
			if end < 0 {
				return
			}
			i = end + 1
		default:
			i++
		}
	}
}

// onlyVersion reports whether body, an executable comment's, is what the
// parser's comment reader fails on: at most five digits, nothing else.
func onlyVersion(body []byte) bool {
	n := 0
	for len(body) > 0 {
		r, size := utf8.DecodeRune(body)
		if !unicode.IsDigit(r) {
			return false
		}
		n++
		body = body[size:]
	}
	return n <= 5
}
