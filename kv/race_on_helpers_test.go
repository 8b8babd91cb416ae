//go:build race

package kv

// underRace is set in race builds, which run several times slower: the
// heavier concurrency, crash and transaction tests scale their work down.
const underRace = true
