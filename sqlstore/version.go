package sqlstore

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

// The server's identity, one string everywhere: VERSION(), @@version and
// @@version_comment in every session, and the MySQL protocol's handshake
// (package server). MySQL clients read the version to choose features, so
// it names the MySQL release whose behaviour Strata follows; the suffix
// and the comment name Strata. GMS keeps "version" and "version_comment"
// as process-wide globals with its own values ("8.0.31", "Dolt"); each
// session answers with these instead, so no other engine in the process is
// changed.
const (
	ServerVersion  = "8.0.33-strata"
	VersionComment = "Strata"
)

// GetSessionVariable implements sql.Session: the server's identity (above),
// then the session's variables.
func (s *Session) GetSessionVariable(ctx *sql.Context, name string) (any, error) {
	if len(name) >= len("version") && len(name) <= len("version_comment") {
		switch {
		case strings.EqualFold(name, "version"):
			return ServerVersion, nil
		case strings.EqualFold(name, "version_comment"):
			return VersionComment, nil
		}
	}
	if v, ok := s.diagnosticsVar(name); ok {
		return v, nil
	}
	if len(name) == len("sql_mode") && strings.EqualFold(name, "sql_mode") {
		// Read at every write (strict mode, NO_AUTO_VALUE_ON_ZERO): GMS
		// keeps it as a set's bits and spells it out at each read. The
		// value read at the last change of the session's variables is the
		// same string.
		if v := s.currentVars(); v != nil && v.sqlMode != nil {
			return v.sqlMode, nil
		}
	}
	return s.BaseSession.GetSessionVariable(ctx, name)
}

// GetAllSessionVariables implements sql.Session: the session's variables
// with the server's identity and the diagnostics area's counts (SHOW
// VARIABLES).
func (s *Session) GetAllSessionVariables() map[string]any {
	m := s.BaseSession.GetAllSessionVariables()
	m["version"] = ServerVersion
	m["version_comment"] = VersionComment
	for _, name := range [...]string{warningCountVar, errorCountVar} {
		if v, ok := s.diagnosticsVar(name); ok {
			m[name] = v
		}
	}
	return m
}
