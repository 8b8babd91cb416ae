package mysqlcompat

import (
	"slices"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// Install puts the corrections into e, and into nothing else: copies of
// the rule lists of e's analyzer, a wrapper of its exec builder and of its
// parsers. An engine without Install behaves as GMS does.
//
// final are rules of the caller's that must see the plan of every
// statement as the value rules do (below): they run after them, in turn,
// at the end of every analysis and on the plans of GMS's fixed batches,
// where they get no scope and no query flags. Each must leave a plan it
// has rewritten as it is.
//
// Install wraps the exec builder e has: a builder installed afterwards
// that builds whole trees itself (rowexec.NewOverrideBuilder) would hide
// the wrapper from the plans it builds, so such builders go in first.
// Call it once per engine, before its first statement. The string
// functions are not installed here: the engine's database provider
// resolves them (Function).
func Install(e *sqle.Engine, final ...analyzer.RuleFunc) {
	a := e.Analyzer
	// At the end of the once-after batch, after GMS analyzed the sides of
	// set operations and planned the joins (that batch also finalizes
	// subqueries): UNION sides typed as MySQL merges them (setoptypes.go),
	// GROUP_CONCAT bounded by group_concat_max_len (groupconcat.go), and
	// the one-row read of MIN or MAX of a primary key (minmaxkey.go).
	AddRule(a, "once-after", analyzer.Rule{Id: AfterJoinsRule, Apply: ChainRules(mergeSetOpTypesRule, replaceGroupConcat, minMaxKeyRead)})
	likes := &likeSources{} // CREATE TABLE ... LIKE of virtual tables (virtuallike.go)
	rules := slices.Concat([]analyzer.RuleFunc{lastInsertIDRow, exactAggregates, checkAssignments, compareUpdatesExactly, checkIntArithmetic, castStringInts, exactNumberCompares, exactHashKeys, limitRecursion, numberInsertErrors(a), virtualTables, orderWarnings, textValues, keyDistincts, showOriginalTriggers, copyVirtualLike(likes)}, final)
	// The value rules, and SET DEFAULT foreign keys refused (fkactions.go),
	// run at the end of every analysis, after the triggers and procedures
	// are applied and before GMS tracks the process. They run inside the
	// rule before process tracking, as the rule selectors of nested
	// analyses (subqueries, procedure bodies) skip process tracking.
	WrapRule(a, func(id analyzer.RuleId) bool { return id == analyzer.QuoteDefaultColumnValueNamesId }, func(quote analyzer.RuleFunc) analyzer.RuleFunc {
		return ChainRules(slices.Concat([]analyzer.RuleFunc{quote}, rules, []analyzer.RuleFunc{refuseSetDefault})...)
	})
	// The statements of a BEGIN ... END trigger body get their foreign
	// keys (triggerfks.go).
	WrapRule(a, func(id analyzer.RuleId) bool { return id.String() == "applyForeignKeys" }, triggerBlockForeignKeys)
	// MIN and MAX of a primary key answer one row over no rows
	// (minmaxkey.go): before GMS's replaceAgg, in the once-before batch,
	// inside a rule GMS knows; and LIKE over PAD SPACE strings kept from
	// GMS's simplifyFilters, which runs later in that batch (padspace.go);
	// global-only variables bound to their global value before that rule
	// folds the filters that read them (globalvars.go); CAST of strings and
	// dates to integers (castint.go) before GMS plans index lookups, which
	// evaluate a constant CAST for their ranges.
	WrapRule(a, func(id analyzer.RuleId) bool { return id == analyzer.ValidateColumnDefaultsId }, func(validate analyzer.RuleFunc) analyzer.RuleFunc {
		return ChainRules(validate, minMaxKeyRows, keepLikes, globalOnlyVars, castStringInts)
	})
	// ALTER TABLE of a table with virtual columns sees its constraints
	// (virtualchecks.go), before GMS resolves and validates its clauses.
	WrapRule(a, func(id analyzer.RuleId) bool { return id == analyzer.ResolveAlterColumnId }, func(r analyzer.RuleFunc) analyzer.RuleFunc { return ChainRules(r, renamedAlterTargets) }) // alterrenames.go
	WrapRule(a, func(id analyzer.RuleId) bool { return id == analyzer.ValidateCreateTableId }, func(validate analyzer.RuleFunc) analyzer.RuleFunc {
		return ChainRules(validate, virtualAlterChecks)
	})
	a.ExecBuilder = valueRulesExec{NodeExecBuilder: a.ExecBuilder, a: a, rules: ChainRules(rules...)}
	// Window functions over grouped rows are rewritten after parsing
	// (groupwindow.go); the analyzer's parser reads stored definitions.
	a.Parser = windowParser{a.Parser}
	e.Parser = windowParser{e.Parser}
	// Fixed-point literals compared with columns kept from GMS's binder
	// (numliteral.go).
	a.Parser, e.Parser = literalParser{a.Parser}, literalParser{e.Parser}
	// Values given for generated columns (genvalues.go): the statements
	// the engine runs, not stored definitions.
	e.Parser = generatedValuesParser{Parser: e.Parser, cat: a.Catalog, likes: likes}
	// DATE, TIME and TIMESTAMP literals typed (typedliterals.go).
	a.Parser = typedLiteralParser{a.Parser}
	e.Parser = typedLiteralParser{e.Parser}
	e.Parser = diagnosticsParser{e.Parser} // SHOW ERRORS, SHOW COUNT(*) (diagshow.go)
	WrapRule(a, func(id analyzer.RuleId) bool { return id.String() == "validateOffsetAndLimit" }, func(v analyzer.RuleFunc) analyzer.RuleFunc { return ChainRules(diagnosticShows, v) })
	// ... and in stored bodies (genbodies.go): the texts the database
	// gives GMS to bind, and the triggers' shown as written.
	triggersOriginalText(e)
	// information_schema.TRIGGERS binds each trigger in its own database
	// (triggerschema.go).
	triggersPerDatabase(e)
}

// AfterJoinsRule names the rule Install adds at the end of the once-after
// batch, after GMS plans the joins: the one id this package gives a rule,
// above GMS's. Another package's rules that belong there can run inside it
// (WrapRule), rather than as rules whose ids GMS does not know, which cost
// each statement the formatting of their names.
const AfterJoinsRule analyzer.RuleId = 10_001

// Analyzer rules of values
//
// These rewrites close gaps in how GMS evaluates, compares and applies
// values: exactAggregates (exactagg.go: SUM and AVG exact and typed as in
// MySQL), checkAssignments (assign.go and bigint.go: assignments out of a
// column's range, values bound for BIGINT), compareUpdatesExactly
// (exactupdate.go: updates that change only letter case),
// checkIntArithmetic (intarith.go: integer arithmetic exact and typed as
// in MySQL), castStringInts (castint.go: CAST of a string to SIGNED or
// UNSIGNED reads its integer prefix, of a date or time gives its digits), exactHashKeys (hashkeys.go: hash joins over DECIMAL and
// mixed types), limitRecursion (recursivecte.go: recursive CTEs bounded
// by cte_max_recursion_depth), textValues (timetext.go: dates and times
// as text, date plus INTERVAL, CONCAT and set operation collations, ENUMs
// compared as strings) and numberInsertErrors (insertvalues.go: the
// rows of an INSERT counted, for its errors). Each leaves a plan it has rewritten as it is. They run
// inside a rule GMS knows, at the end of every analysis (Install).
//
// GMS analyzes a simple INSERT (VALUES of literals), a single-table UPDATE
// and a single-table DELETE with fixed batches built from its package-level
// rule lists (analyzer.getBatchesForNode), which an engine's own rule lists
// do not reach. The plans of those statements get the rules when the
// engine's exec builder builds them (valueRulesExec). A trigger's body is
// analyzed on its own, with the engine's rules or those fixed batches; its
// plan is part of its statement's plan, which gets the rules after the
// trigger is applied, either way. A procedure's statements are statements
// of their own.

// valueRulesExec is an engine's exec builder with the value rules applied
// to the plans GMS analyzed with its fixed batches. It also builds
// subqueries, for every row of the outer query: a plan that is not a
// statement costs a type switch.
type valueRulesExec struct {
	sql.NodeExecBuilder
	a     *analyzer.Analyzer
	rules analyzer.RuleFunc // the value rules and the caller's, chained
}

// Build implements sql.NodeExecBuilder.
func (e valueRulesExec) Build(ctx *sql.Context, n sql.Node, r sql.Row) (sql.RowIter, error) {
	// EXPLAIN: GMS analyzes the statement explained as it would run it.
	q := n
	d, explain := n.(*plan.DescribeQuery)
	if explain {
		q = d.Query()
	}
	if fixedBatches(q) {
		q, err := analyzeFixedSubqueries(ctx, e.a, q) // dmlsubqueries.go
		if err != nil {
			return nil, err
		}
		if q, err = planFixedRanges(ctx, e.a, q); err != nil { // dmlranges.go
			return nil, err
		}
		q, _, err = e.rules(ctx, e.a, q, nil, analyzer.DefaultRuleSelector, nil)
		if err != nil {
			return nil, err
		}
		if explain {
			n = d.WithQuery(q)
		} else {
			n = q
		}
	}
	return buildWording(ctx, e.NodeExecBuilder, n, r)
}

// buildWording builds n with b, an INSERT's conversion errors worded as
// MySQL's (insertvalues.go).
func buildWording(ctx *sql.Context, b sql.NodeExecBuilder, n sql.Node, r sql.Row) (sql.RowIter, error) {
	iter, err := b.Build(ctx, n, r)
	if err != nil {
		return nil, err
	}
	if ins, src := insertOf(n); ins != nil {
		iter = &insertErrors{RowIter: iter, sch: ins.Destination.Schema(), n: src.n}
	}
	return withUpdateWarnings(n, iter), nil // updateinfo.go
}

// fixedBatches reports whether GMS may have analyzed a statement whose
// plan is n with fixed batches: the conditions of
// analyzer.getBatchesForNode, as far as analysis keeps them, on the
// statement under the executors of its AFTER triggers.
func fixedBatches(n sql.Node) bool {
	for {
		switch x := n.(type) {
		case *plan.TriggerExecutor:
			n = x.Left()
		case *plan.InsertInto:
			return x.LiteralValueSource
		case *plan.Update:
			return x.HasSingleRel && !x.IsJoin
		case *plan.DeleteFrom:
			// Analysis drops RefsSingleRel (DeleteFrom.WithChildren):
			// every single-table DELETE gets the rules, some twice,
			// which leaves their plans as they are.
			return !x.HasExplicitTargets()
		default:
			return false
		}
	}
}
