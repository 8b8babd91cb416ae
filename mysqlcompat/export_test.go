package mysqlcompat

// GroupedTable is the name of the derived table that windows over grouped
// rows read (groupwindow.go), for the tests of package mysqlcompat_test.
const GroupedTable = groupedTable
