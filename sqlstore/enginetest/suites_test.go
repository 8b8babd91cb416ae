package enginetest

import (
	"os"
	"testing"

	"github.com/dolthub/go-mysql-server/enginetest"
	"github.com/dolthub/go-mysql-server/enginetest/queries"
)

// suite is one of GMS's engine test suites.
type suite struct {
	name string
	run  func(t *testing.T, h enginetest.Harness)
}

// suites are the suites run against sqlstore: every suite of GMS's
// memory_engine_test.go that is about the backend, minus the plan suites
// (exact EXPLAIN text with the memory backend's statistics), the versioned
// (AS OF) and read-only-database suites (features sqlstore does not have),
// spatial, full-text and vector indexes, LOAD DATA and SELECT INTO files
// (they read and write files relative to GMS's source tree) and the
// wire-protocol suites.
var suites = []suite{
	{"Queries", func(t *testing.T, h enginetest.Harness) { enginetest.TestQueries(t, h) }},
	{"JoinQueries", func(t *testing.T, h enginetest.Harness) { enginetest.TestJoinQueries(t, h) }},
	{"LateralJoin", func(t *testing.T, h enginetest.Harness) { enginetest.TestLateralJoinQueries(t, h) }},
	{"JoinOps", func(t *testing.T, h enginetest.Harness) { enginetest.TestJoinOps(t, h, enginetest.DefaultJoinOpTests) }},
	{"JSONTableQueries", func(t *testing.T, h enginetest.Harness) { enginetest.TestJSONTableQueries(t, h) }},
	{"JSONTableScripts", func(t *testing.T, h enginetest.Harness) { enginetest.TestJSONTableScripts(t, h) }},
	{"ColumnAliases", func(t *testing.T, h enginetest.Harness) { enginetest.TestColumnAliases(t, h) }},
	{"DerivedTableOuterScopeVisibility", func(t *testing.T, h enginetest.Harness) { enginetest.TestDerivedTableOuterScopeVisibility(t, h) }},
	{"OrderByGroupBy", func(t *testing.T, h enginetest.Harness) { enginetest.TestOrderByGroupBy(t, h) }},
	{"AmbiguousColumnResolution", func(t *testing.T, h enginetest.Harness) { enginetest.TestAmbiguousColumnResolution(t, h) }},
	{"QueryErrors", func(t *testing.T, h enginetest.Harness) { enginetest.TestQueryErrors(t, h) }},
	{"InfoSchema", func(t *testing.T, h enginetest.Harness) { enginetest.TestInfoSchema(t, h) }},
	{"InsertInto", func(t *testing.T, h enginetest.Harness) { enginetest.TestInsertInto(t, h) }},
	{"InsertIgnoreInto", func(t *testing.T, h enginetest.Harness) { enginetest.TestInsertIgnoreInto(t, h) }},
	{"InsertDuplicateKeyKeyless", func(t *testing.T, h enginetest.Harness) { enginetest.TestInsertDuplicateKeyKeyless(t, h) }},
	{"IgnoreIntoWithDuplicateUniqueKeyKeyless", func(t *testing.T, h enginetest.Harness) { enginetest.TestIgnoreIntoWithDuplicateUniqueKeyKeyless(t, h) }},
	{"InsertIntoErrors", func(t *testing.T, h enginetest.Harness) { enginetest.TestInsertIntoErrors(t, h) }},
	{"GeneratedColumns", func(t *testing.T, h enginetest.Harness) { enginetest.TestGeneratedColumns(t, h) }},
	{"ReplaceInto", func(t *testing.T, h enginetest.Harness) { enginetest.TestReplaceInto(t, h) }},
	{"ReplaceIntoErrors", func(t *testing.T, h enginetest.Harness) { enginetest.TestReplaceIntoErrors(t, h) }},
	{"Update", func(t *testing.T, h enginetest.Harness) { enginetest.TestUpdate(t, h) }},
	{"UpdateIgnore", func(t *testing.T, h enginetest.Harness) { enginetest.TestUpdateIgnore(t, h) }},
	{"UpdateErrors", func(t *testing.T, h enginetest.Harness) { enginetest.TestUpdateErrors(t, h) }},
	{"OnUpdateExprScripts", func(t *testing.T, h enginetest.Harness) { enginetest.TestOnUpdateExprScripts(t, h) }},
	{"Delete", func(t *testing.T, h enginetest.Harness) { enginetest.TestDelete(t, h) }},
	{"DeleteErrors", func(t *testing.T, h enginetest.Harness) { enginetest.TestDeleteErrors(t, h) }},
	{"Truncate", func(t *testing.T, h enginetest.Harness) { enginetest.TestTruncate(t, h) }},
	{"Convert", func(t *testing.T, h enginetest.Harness) { enginetest.TestConvert(t, h) }},
	{"RowLimit", func(t *testing.T, h enginetest.Harness) { enginetest.TestRowLimit(t, h) }},
	{"Scripts", func(t *testing.T, h enginetest.Harness) { enginetest.TestScripts(t, h) }},
	{"NumericErrorScripts", func(t *testing.T, h enginetest.Harness) { enginetest.TestNumericErrorScripts(t, h) }},
	{"UserPrivileges", func(t *testing.T, h enginetest.Harness) {
		enginetest.TestUserPrivileges(t, h.(enginetest.ClientHarness))
	}},
	{"ComplexIndexQueries", func(t *testing.T, h enginetest.Harness) { enginetest.TestComplexIndexQueries(t, h) }},
	{"Triggers", func(t *testing.T, h enginetest.Harness) { enginetest.TestTriggers(t, h) }},
	{"RollbackTriggers", func(t *testing.T, h enginetest.Harness) { enginetest.TestRollbackTriggers(t, h) }},
	{"ShowTriggers", func(t *testing.T, h enginetest.Harness) { enginetest.TestShowTriggers(t, h) }},
	{"TriggerErrors", func(t *testing.T, h enginetest.Harness) { enginetest.TestTriggerErrors(t, h) }},
	{"StoredProcedures", func(t *testing.T, h enginetest.Harness) { enginetest.TestStoredProcedures(t, h) }},
	{"Events", func(t *testing.T, h enginetest.Harness) { enginetest.TestEvents(t, h) }},
	{"Views", func(t *testing.T, h enginetest.Harness) { enginetest.TestViews(t, h) }},
	{"CreateTable", func(t *testing.T, h enginetest.Harness) { enginetest.TestCreateTable(t, h) }},
	{"DropTable", func(t *testing.T, h enginetest.Harness) { enginetest.TestDropTable(t, h) }},
	{"RenameTable", func(t *testing.T, h enginetest.Harness) { enginetest.TestRenameTable(t, h) }},
	{"RenameColumn", func(t *testing.T, h enginetest.Harness) { enginetest.TestRenameColumn(t, h) }},
	{"AddColumn", func(t *testing.T, h enginetest.Harness) { enginetest.TestAddColumn(t, h) }},
	{"ModifyColumn", func(t *testing.T, h enginetest.Harness) { enginetest.TestModifyColumn(t, h) }},
	{"DropColumn", func(t *testing.T, h enginetest.Harness) { enginetest.TestDropColumn(t, h) }},
	{"DropColumnKeylessTables", func(t *testing.T, h enginetest.Harness) { enginetest.TestDropColumnKeylessTables(t, h) }},
	{"CreateDatabase", func(t *testing.T, h enginetest.Harness) { enginetest.TestCreateDatabase(t, h) }},
	{"DropDatabase", func(t *testing.T, h enginetest.Harness) { enginetest.TestDropDatabase(t, h) }},
	{"PkOrdinalsDDL", func(t *testing.T, h enginetest.Harness) { enginetest.TestPkOrdinalsDDL(t, h) }},
	{"PkOrdinalsDML", func(t *testing.T, h enginetest.Harness) { enginetest.TestPkOrdinalsDML(t, h) }},
	{"CreateForeignKeys", func(t *testing.T, h enginetest.Harness) { enginetest.TestCreateForeignKeys(t, h) }},
	{"DropForeignKeys", func(t *testing.T, h enginetest.Harness) { enginetest.TestDropForeignKeys(t, h) }},
	{"ForeignKeys", func(t *testing.T, h enginetest.Harness) { enginetest.TestForeignKeys(t, h) }},
	{"CreateCheckConstraints", func(t *testing.T, h enginetest.Harness) { enginetest.TestCreateCheckConstraints(t, h) }},
	{"ChecksOnInsert", func(t *testing.T, h enginetest.Harness) { enginetest.TestChecksOnInsert(t, h) }},
	{"ChecksOnUpdate", func(t *testing.T, h enginetest.Harness) { enginetest.TestChecksOnUpdate(t, h) }},
	{"DisallowedCheckConstraints", func(t *testing.T, h enginetest.Harness) { enginetest.TestDisallowedCheckConstraints(t, h) }},
	{"DropCheckConstraints", func(t *testing.T, h enginetest.Harness) { enginetest.TestDropCheckConstraints(t, h) }},
	{"ReadOnly", func(t *testing.T, h enginetest.Harness) { enginetest.TestReadOnly(t, h, true) }},
	{"NaturalJoin", func(t *testing.T, h enginetest.Harness) { enginetest.TestNaturalJoin(t, h) }},
	{"NaturalJoinEqual", func(t *testing.T, h enginetest.Harness) { enginetest.TestNaturalJoinEqual(t, h) }},
	{"NaturalJoinDisjoint", func(t *testing.T, h enginetest.Harness) { enginetest.TestNaturalJoinDisjoint(t, h) }},
	{"InnerNestedInNaturalJoins", func(t *testing.T, h enginetest.Harness) { enginetest.TestInnerNestedInNaturalJoins(t, h) }},
	{"WindowFunctions", func(t *testing.T, h enginetest.Harness) { enginetest.TestWindowFunctions(t, h) }},
	{"WindowRowFrames", func(t *testing.T, h enginetest.Harness) { enginetest.TestWindowRowFrames(t, h) }},
	{"WindowRangeFrames", func(t *testing.T, h enginetest.Harness) { enginetest.TestWindowRangeFrames(t, h) }},
	{"NamedWindows", func(t *testing.T, h enginetest.Harness) { enginetest.TestNamedWindows(t, h) }},
	{"ColumnDefaults", func(t *testing.T, h enginetest.Harness) { enginetest.TestColumnDefaults(t, h) }},
	{"AlterTable", func(t *testing.T, h enginetest.Harness) { enginetest.TestAlterTable(t, h) }},
	{"DateParse", func(t *testing.T, h enginetest.Harness) { enginetest.TestDateParse(t, h) }},
	{"JsonScripts", func(t *testing.T, h enginetest.Harness) { enginetest.TestJsonScripts(t, h, nil) }},
	{"ShowTableStatus", func(t *testing.T, h enginetest.Harness) { enginetest.TestShowTableStatus(t, h) }},
	{"AddDropPks", func(t *testing.T, h enginetest.Harness) { enginetest.TestAddDropPks(t, h) }},
	{"AddAutoIncrementColumn", func(t *testing.T, h enginetest.Harness) {
		for _, script := range queries.AlterTableAddAutoIncrementScripts {
			enginetest.TestScript(t, h, script)
		}
	}},
	{"NullRanges", func(t *testing.T, h enginetest.Harness) { enginetest.TestNullRanges(t, h) }},
	{"Blobs", func(t *testing.T, h enginetest.Harness) { enginetest.TestBlobs(t, h) }},
	{"Indexes", func(t *testing.T, h enginetest.Harness) { enginetest.TestIndexes(t, h) }},
	{"IndexPrefix", func(t *testing.T, h enginetest.Harness) { enginetest.TestIndexPrefix(t, h) }},
	{"Variables", func(t *testing.T, h enginetest.Harness) { enginetest.TestVariables(t, h) }},
	// Not Warnings: its SHOW WARNINGS ... LIMIT cases expect GMS's newest
	// first, and it asks no skips; MySQL and sqlstore list warnings in the
	// order raised (mysqlcompat's TestCollationSpec).
	{"Use", func(t *testing.T, h enginetest.Harness) { enginetest.TestUse(t, h) }},
	{"Prepared", func(t *testing.T, h enginetest.Harness) { enginetest.TestPrepared(t, h) }},
	{"PreparedInsert", func(t *testing.T, h enginetest.Harness) { enginetest.TestPreparedInsert(t, h) }},
	{"PreparedStatements", func(t *testing.T, h enginetest.Harness) { enginetest.TestPreparedStatements(t, h) }},
	{"CharsetCollationEngine", func(t *testing.T, h enginetest.Harness) { enginetest.TestCharsetCollationEngine(t, h) }},
	{"Transactions", func(t *testing.T, h enginetest.Harness) { enginetest.TestTransactionScripts(t, h) }},
	{"ConcurrentTransactions", func(t *testing.T, h enginetest.Harness) { enginetest.TestConcurrentTransactions(t, h) }},
	{"SQLLogicTests", func(t *testing.T, h enginetest.Harness) { enginetest.TestSQLLogicTests(t, h) }},
}

// harnessFor returns the harness a suite runs on: sqlstore's, or GMS's
// in-memory one when SQLSTORE_ENGINETEST_HARNESS=memory (to measure the
// memory backend's pass counts with the same suite list, for
// docs/testing.md).
func harnessFor(name string) enginetest.Harness {
	if os.Getenv("SQLSTORE_ENGINETEST_HARNESS") == "memory" {
		return enginetest.NewDefaultMemoryHarness()
	}
	return newHarness(name)
}

// TestGMS runs every suite as a subtest: go test -run 'TestGMS/Queries$'.
func TestGMS(t *testing.T) {
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) { s.run(t, harnessFor(s.name)) })
	}
}
