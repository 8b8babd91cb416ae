package memtable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// valueFor derives an entry's value from its internal key, so that a reader
// can tell a complete entry from a torn one: the key's checksum, then filler
// whose length also depends on the key.
func valueFor(ik []byte) []byte {
	sum := crc32.ChecksumIEEE(ik)
	v := binary.LittleEndian.AppendUint32(nil, sum)
	return append(v, bytes.Repeat([]byte{byte(sum)}, int(sum%64))...)
}

// checkEntry reports an entry whose value does not match its key.
func checkEntry(kv *base.KV) error {
	if !bytes.Equal(kv.V, valueFor(kv.K)) {
		return fmt.Errorf("entry %s has value %x, want %x", base.FormatKey(kv.K), kv.V, valueFor(kv.K))
	}
	return nil
}

// reader scans and seeks m until stop is closed, checking that every entry
// it meets is complete and that the order is strict in both directions.
func reader(m *Memtable, stop <-chan struct{}, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 3))
	it := m.NewIter()
	defer it.Close()
	for round := 0; ; round++ {
		select {
		case <-stop:
			return nil
		default:
		}
		var last []byte
		var kv *base.KV
		switch round % 4 {
		case 0: // forward from a random point
			k := base.MakeSearchKey(nil, fmt.Appendf(nil, "k%04d", rng.IntN(1000)), base.SeqNumMax)
			for kv = it.SeekGE(k); kv != nil; kv = it.Next() {
				if base.Compare(kv.K, k) < 0 || (last != nil && base.Compare(last, kv.K) >= 0) {
					return fmt.Errorf("forward scan out of order at %s", base.FormatKey(kv.K))
				}
				if err := checkEntry(kv); err != nil {
					return err
				}
				last = append(last[:0], kv.K...)
			}
		case 1: // backward from a random point
			k := base.MakeSearchKey(nil, fmt.Appendf(nil, "k%04d", rng.IntN(1000)), base.SeqNumMax)
			for kv = it.SeekLT(k); kv != nil; kv = it.Prev() {
				if base.Compare(kv.K, k) >= 0 || (last != nil && base.Compare(last, kv.K) <= 0) {
					return fmt.Errorf("backward scan out of order at %s", base.FormatKey(kv.K))
				}
				if err := checkEntry(kv); err != nil {
					return err
				}
				last = append(last[:0], kv.K...)
			}
		case 3: // forward from a random point, over each key's older versions with NextGE
			k := base.MakeSearchKey(nil, fmt.Appendf(nil, "k%04d", rng.IntN(1000)), base.SeqNumMax)
			var next []byte
			for kv = it.SeekGE(k); kv != nil; kv = it.NextGE(next) {
				if base.Compare(kv.K, k) < 0 || (last != nil && base.Compare(last, kv.K) >= 0) {
					return fmt.Errorf("forward scan by NextGE out of order at %s", base.FormatKey(kv.K))
				}
				if next != nil && base.Compare(kv.K, next) < 0 {
					return fmt.Errorf("NextGE(%s) returned %s, before it", base.FormatKey(next), base.FormatKey(kv.K))
				}
				if err := checkEntry(kv); err != nil {
					return err
				}
				last = append(last[:0], kv.K...)
				// Past every version of the key (sequence numbers start at 1).
				next = base.AppendKey(next[:0], kv.UserKey(), 0, 0)
			}
		case 2: // point reads
			for range 100 {
				ukey := fmt.Appendf(nil, "k%04d", rng.IntN(1000))
				v, kind, _, ok := m.Get(ukey, base.SeqNum(rng.IntN(1<<20)))
				if !ok {
					continue
				}
				if kind != base.KindSet && kind != base.KindDelete {
					return fmt.Errorf("Get(%q) returned kind %s", ukey, kind)
				}
				if len(v) < 4 || len(v) != 4+int(binary.LittleEndian.Uint32(v)%64) {
					return fmt.Errorf("Get(%q) returned a torn value %x", ukey, v)
				}
			}
		}
		if err := it.Error(); err != nil {
			return err
		}
	}
}

// TestConcurrentAddAndRead has writers insert while readers scan and seek,
// then checks the final content against the model in both directions.
func TestConcurrentAddAndRead(t *testing.T) {
	const writers, perWriter, readers = 4, 5000, 2
	m := New(8 << 20)
	stop := make(chan struct{})
	var wg, rg sync.WaitGroup
	readErrs := make([]error, readers)
	for r := range readers {
		rg.Go(func() { readErrs[r] = reader(m, stop, uint64(r)) })
	}
	added := make([][][]byte, writers)
	writeErrs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 4))
			for i := range perWriter {
				seq := base.SeqNum(1 + w + writers*i) // distinct across writers
				ukey := fmt.Appendf(nil, "k%04d", rng.IntN(1000))
				kind := base.Kind(rng.IntN(2))
				key := base.AppendKey(nil, ukey, seq, kind)
				if err := m.Add(ukey, seq, kind, valueFor(key)); err != nil {
					writeErrs[w] = err
					return
				}
				added[w] = append(added[w], key)
			}
		})
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	for _, err := range append(writeErrs, readErrs...) {
		require.NoError(t, err)
	}

	md := &model{}
	for _, keys := range added {
		for _, k := range keys {
			md.add(k, valueFor(k))
		}
	}
	require.Len(t, md.entries, writers*perWriter)
	md.requireScan(t, m.NewIter())
	for range 2000 {
		ukey := fmt.Appendf(nil, "k%04d", rand.IntN(1000))
		seq := base.SeqNum(rand.IntN(writers*perWriter + 2))
		wv, wk, wok := md.get(ukey, seq)
		v, k, _, ok := m.Get(ukey, seq)
		require.Equal(t, wok, ok)
		require.Equal(t, wk, k)
		require.Equal(t, wv, v)
	}
}

// TestConcurrentDuplicates races writers adding the same internal keys: each
// key goes in exactly once and every other attempt gets ErrExists.
func TestConcurrentDuplicates(t *testing.T) {
	const writers, keys = 4, 3000
	m := New(8 << 20)
	var wins, dups atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			order := rand.New(rand.NewPCG(uint64(w), 5)).Perm(keys)
			for _, i := range order {
				ukey := fmt.Appendf(nil, "k%05d", i%500)
				seq := base.SeqNum(i + 1)
				err := m.Add(ukey, seq, base.KindSet, valueFor(base.AppendKey(nil, ukey, seq, base.KindSet)))
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, ErrExists):
					dups.Add(1)
				default:
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, int64(keys), wins.Load())
	require.Equal(t, int64(keys*(writers-1)), dups.Load())

	md := &model{}
	for i := range keys {
		k := base.AppendKey(nil, fmt.Appendf(nil, "k%05d", i%500), base.SeqNum(i+1), base.KindSet)
		md.add(k, valueFor(k))
	}
	md.requireScan(t, m.NewIter())
}

// TestConcurrentRangeDeletes adds points and tombstones from several
// goroutines at once; both lists end up complete and separate.
func TestConcurrentRangeDeletes(t *testing.T) {
	const writers, per = 4, 1000
	m := New(4 << 20)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range per {
				seq := base.SeqNum(1 + w + writers*i)
				start := fmt.Appendf(nil, "r%04d", (i*7+w)%1000)
				var err error
				if i%2 == 0 {
					err = m.AddRangeDelete(start, append(start, '~'), seq)
				} else {
					err = m.Add(start, seq, base.KindSet, []byte("v"))
				}
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		it   *Iter
		kind base.Kind
	}{{m.NewIter(), base.KindSet}, {m.NewRangeDelIter(), base.KindRangeDelete}} {
		n := 0
		var last []byte
		for kv := tc.it.First(); kv != nil; kv = tc.it.Next() {
			require.Equal(t, tc.kind, kv.Kind())
			if last != nil {
				require.Negative(t, base.Compare(last, kv.K))
			}
			last = append(last[:0], kv.K...)
			n++
		}
		require.Equal(t, writers*per/2, n)
	}
}
