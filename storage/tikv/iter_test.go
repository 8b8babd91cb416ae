//go:build !darwin || cgo

package tikv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/strata-db/strata/storage"
)

// TestIterMatchesModel drives iterators over committed keys merged with a
// transaction's writes (sets, deletes, range deletions) through random
// moves in both directions, with and without bounds, and compares every
// position with a sorted model of what the transaction should see.
func TestIterMatchesModel(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { testIterMatchesModel(t, seed) })
	}
}

func testIterMatchesModel(t *testing.T, seed uint64) {
	e := openMock(t, []byte("k10"), []byte("k25"))
	defer e.Close()
	r := rand.New(rand.NewPCG(seed, 11))
	key := func(i int) []byte { return fmt.Appendf(nil, "k%02d", i) }
	const n = 40
	model := map[string]string{}
	tx, _ := e.Begin()
	for i := 0; i < n; i += 1 + r.IntN(2) {
		v := fmt.Sprint("c", i)
		model[string(key(i))] = v
		if err := tx.Set(key(i), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	tx, _ = e.Begin()
	defer tx.Rollback()
	for w := 0; w < 30; w++ {
		i := r.IntN(n)
		switch r.IntN(4) {
		case 0, 1:
			v := fmt.Sprint("w", w)
			model[string(key(i))] = v
			must(t, tx.Set(key(i), []byte(v)))
		case 2:
			delete(model, string(key(i)))
			must(t, tx.Delete(key(i)))
		case 3:
			j := min(n, i+1+r.IntN(5))
			for k := i; k < j; k++ {
				delete(model, string(key(k)))
			}
			must(t, tx.DeleteRange(key(i), key(j)))
		}
	}
	var all []string
	for k := range model {
		all = append(all, k)
	}
	sort.Strings(all)
	for round := 0; round < 40; round++ {
		var lo, hi []byte
		if r.IntN(2) == 0 {
			lo = key(r.IntN(n))
		}
		if r.IntN(2) == 0 {
			hi = key(r.IntN(n + 1))
		}
		var keys []string
		for _, k := range all {
			if (lo == nil || k >= string(lo)) && (hi == nil || k < string(hi)) {
				keys = append(keys, k)
			}
		}
		it, err := tx.NewIter(&storage.IterOptions{LowerBound: lo, UpperBound: hi, ReadOptions: storage.ReadOptions{ReadaheadSize: 1}})
		must(t, err)
		pos := -1 // index into keys; -1 or len: invalid
		for step := 0; step < 30; step++ {
			var ok bool
			var what string
			switch op := r.IntN(6); {
			case op == 0:
				what, ok = "First", it.First()
				pos = 0
			case op == 1:
				what, ok = "Last", it.Last()
				pos = len(keys) - 1
			case op == 2:
				k := key(r.IntN(n + 1))
				what, ok = fmt.Sprintf("SeekGE(%s)", k), it.SeekGE(k)
				pos = sort.SearchStrings(keys, string(k))
			case op == 3:
				k := key(r.IntN(n + 1))
				what, ok = fmt.Sprintf("SeekLT(%s)", k), it.SeekLT(k)
				pos = sort.SearchStrings(keys, string(k)) - 1
			case op == 4 && pos >= 0 && pos < len(keys):
				what, ok = "Next", it.Next()
				pos++
			case op == 5 && pos >= 0 && pos < len(keys):
				what, ok = "Prev", it.Prev()
				pos--
			default:
				continue
			}
			want := pos >= 0 && pos < len(keys)
			if ok != want || it.Valid() != want {
				t.Fatalf("round %d [%s,%s) %s: valid %v, want %v (pos %d of %v)", round, lo, hi, what, ok, want, pos, keys)
			}
			if want && (!bytes.Equal(it.Key(), []byte(keys[pos])) || string(it.Value()) != model[keys[pos]]) {
				t.Fatalf("round %d [%s,%s) %s: at %s=%s, want %s=%s", round, lo, hi, what, it.Key(), it.Value(), keys[pos], model[keys[pos]])
			}
			if !want {
				pos = -1
			}
		}
		must(t, it.Error())
		must(t, it.Close())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
