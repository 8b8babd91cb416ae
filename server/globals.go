package server

import (
	"fmt"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/strata-db/strata/sqlstore"
)

// The engine keeps global system variables in one registry and accepts
// SET GLOBAL of nearly all of them, while most change nothing in this
// server: the value is stored and shown, the behaviour stays. A global is
// either in effectiveGlobals, where setting it changes what the server
// does, or refused as MySQL refuses a variable it cannot set (1238). Only
// accounts with SUPER or SYSTEM_VARIABLES_ADMIN may set any (1227).

// globalEffect applies the new value of a global to the running server,
// before the registry takes it; an error refuses the SET.
type globalEffect func(p *policy, v any) error

// effectiveGlobals are the globals that take effect, by name. Those
// without an effect function are read by the engine or the store when
// they are needed: from the registry (local_infile), or from a session's
// copy, which a session takes when it starts, so a new global applies to
// sessions started afterwards, as in MySQL (autocommit, sql_mode, ...).
var effectiveGlobals = map[string]globalEffect{
	"autocommit":               nil,
	"sql_mode":                 nil,
	"time_zone":                nil,
	"foreign_key_checks":       nil,
	"sql_select_limit":         nil,
	"group_concat_max_len":     nil,
	"character_set_client":     nil,
	"character_set_connection": nil,
	"character_set_results":    nil,
	"character_set_server":     nil,
	"collation_connection":     nil,
	"collation_server":         nil,
	"local_infile":             nil,
	"strata_access":            nil,
	"strata_planner":           nil,
	"strata_plan_reuse":        nil,
	"strata_mem_quota_query":   nil,
	"strata_txn_mode":          nil, // a session's transactions' mode
	"innodb_lock_wait_timeout": nil, // a session's lock wait bound
	"max_prepared_stmt_count":  nil, // read by preparedLimit
	"max_connections":          (*policy).setMaxConnections,
	"read_only":                (*policy).setReadOnly,
	"super_read_only":          (*policy).setSuperReadOnly,
}

// serverGlobals are the values the server starts with whatever an earlier
// server of the process set: the registry is the process's, and SET
// GLOBAL lasts until a restart in MySQL.
func (s *Server) serverGlobals() map[string]any {
	return map[string]any{
		"max_connections": int64(s.cfg.MaxConnections),
		"wait_timeout":    waitTimeout(s.cfg.IdleTimeout),
		"read_only":       int8(0),
		"super_read_only": int8(0),
		// The server's identity, as its sessions and handshake give it.
		"version":         sqlstore.ServerVersion,
		"version_comment": sqlstore.VersionComment,
	}
}

// waitTimeout is wait_timeout for the idle timeout d: whole seconds,
// rounded up, at least 1 (the variable's minimum).
func waitTimeout(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}

// resetGlobals gives the effective globals their defaults and the
// server's own their configured values.
func (s *Server) resetGlobals() error {
	vals := map[string]any{}
	for name := range effectiveGlobals {
		v, _, ok := gsql.SystemVariables.GetGlobal(name)
		if !ok {
			continue // registered by a package this binary may lack
		}
		vals[name] = v.GetDefault()
	}
	for name, v := range s.serverGlobals() {
		vals[name] = v
	}
	if err := gsql.SystemVariables.AssignValues(vals); err != nil {
		return fmt.Errorf("setting the system variables: %w", err)
	}
	return nil
}

// checkSetVar decides a SET of the system variable sv: nil when the
// engine may run it, with sv's scope wrapped so that the server applies
// the value (the returned variable), or the error MySQL gives.
func (p *policy) checkSetVar(ctx *gsql.Context, sv *expression.SystemVar) (*expression.SystemVar, error) {
	scope, ok := sv.Scope.(*gsql.MysqlScope)
	if !ok {
		return nil, nil
	}
	name := strings.ToLower(sv.Name)
	def, _, ok := gsql.SystemVariables.GetGlobal(name)
	if !ok {
		return nil, nil // the engine reports the unknown variable
	}
	switch scope.Type {
	case gsql.SystemVariableScope_Global, gsql.SystemVariableScope_Persist, gsql.SystemVariableScope_PersistOnly:
	case gsql.SystemVariableScope_Session:
		if def.IsGlobalOnly() {
			return nil, mysql.NewSQLError(mysql.ERGlobalVariable, mysql.SSUnknownSQLState,
				"Variable '%s' is a GLOBAL variable and should be set with SET GLOBAL", name)
		}
		return nil, nil
	default:
		return nil, nil
	}
	if mv, ok := def.(*gsql.MysqlSystemVariable); ok && mv.Scope.IsSessionOnly() {
		return nil, mysql.NewSQLError(mysql.ERLocalVariable, mysql.SSUnknownSQLState,
			"Variable '%s' is a SESSION variable and can't be used with SET GLOBAL", name)
	}
	if !p.hasDynamic(ctx, "system_variables_admin") {
		return nil, mysql.NewSQLError(mysql.ERSpecifiedAccessDenied, mysql.SSClientError,
			"Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation")
	}
	if scope.Type != gsql.SystemVariableScope_Global {
		return nil, mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSClientError,
			"This version of MySQL doesn't yet support 'SET PERSIST': globals last until the server stops")
	}
	effect, ok := effectiveGlobals[name]
	if !ok || def.IsReadOnly() {
		return nil, mysql.NewSQLError(mysql.ERIncorrectGlobalLocalVar, mysql.SSUnknownSQLState,
			"Variable '%s' is a read only variable", name)
	}
	c := *sv
	c.Scope = globalScope{MysqlScope: scope, p: p, effect: effect}
	return &c, nil
}

// globalScope is the scope of a SET GLOBAL the server allowed: the value
// is checked and converted as the registry will store it, applied to the
// server, then stored.
type globalScope struct {
	*gsql.MysqlScope
	p      *policy
	effect globalEffect
}

// SetValue implements sql.SystemVariableScope.
func (g globalScope) SetValue(ctx *gsql.Context, name string, val any) error {
	if g.effect != nil {
		def, _, ok := gsql.SystemVariables.GetGlobal(name)
		if !ok {
			return gsql.ErrUnknownSystemVariable.New(name)
		}
		v, err := def.SetValue(ctx, val, true)
		if err != nil {
			return err
		}
		g.p.mu.Lock()
		defer g.p.mu.Unlock()
		if err := g.effect(g.p, v.Val); err != nil {
			return err
		}
	}
	return g.MysqlScope.SetValue(ctx, name, val)
}

// setMaxConnections changes the listener's connection limit: connections
// beyond it are refused from then on; open ones stay.
func (p *policy) setMaxConnections(v any) error {
	n, ok := v.(int64)
	if !ok {
		return fmt.Errorf("max_connections: unexpected value %T", v)
	}
	ln := p.s.ln
	ln.mu.Lock()
	ln.max = int(n)
	ln.mu.Unlock()
	return nil
}

// setReadOnly turns read_only on or off; off turns super_read_only off
// too, as in MySQL.
func (p *policy) setReadOnly(v any) error {
	on := isOn(v)
	p.readOnly.Store(on)
	if !on && p.superReadOnly.Load() {
		p.superReadOnly.Store(false)
		return gsql.SystemVariables.AssignValues(map[string]any{"super_read_only": int8(0)})
	}
	return nil
}

// setSuperReadOnly turns super_read_only on or off; on turns read_only on
// too, as in MySQL.
func (p *policy) setSuperReadOnly(v any) error {
	on := isOn(v)
	p.superReadOnly.Store(on)
	if on && !p.readOnly.Load() {
		p.readOnly.Store(true)
		return gsql.SystemVariables.AssignValues(map[string]any{"read_only": int8(1)})
	}
	return nil
}

func isOn(v any) bool {
	switch v := v.(type) {
	case int8:
		return v != 0
	case int64:
		return v != 0
	case bool:
		return v
	}
	return false
}
