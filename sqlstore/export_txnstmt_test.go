package sqlstore

// ConsistentSnapshotText exports consistentSnapshot for the external tests.
var ConsistentSnapshotText = consistentSnapshot
