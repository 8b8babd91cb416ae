package server

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPeerWatcher checks which statements the hang-up watch kills: only
// one that was already running at the previous look, and only when its
// client has hung up.
func TestPeerWatcher(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	var mu sync.Mutex
	var killed []uint32
	w := newPeerWatcher(func(id uint32) {
		mu.Lock()
		killed = append(killed, id)
		mu.Unlock()
	}, time.Hour) // the test looks itself
	defer w.close()
	kills := func() []uint32 {
		mu.Lock()
		defer mu.Unlock()
		k := killed
		killed = nil
		return k
	}

	// Two connections: 1's client stays, 2's hangs up.
	states := map[uint32]*connState{}
	clients := map[uint32]net.Conn{}
	for id := uint32(1); id <= 2; id++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		sc, err := ln.Accept()
		require.NoError(t, err)
		defer sc.Close()
		st := &connState{id: id, raw: rawConnOf(&limitConn{Conn: sc})}
		require.NotNil(t, st.raw)
		w.add(st)
		states[id], clients[id] = st, c
	}
	// A connection whose socket cannot be polled is not watched.
	w.add(&connState{id: 3})

	for _, st := range states {
		st.commandBegin()
	}
	w.look() // the statements start being watched
	require.Empty(t, kills())
	w.look()
	require.Empty(t, kills(), "no client hung up")

	require.NoError(t, clients[2].Close())
	w.look()
	require.Equal(t, []uint32{2}, kills())
	w.look()
	require.Equal(t, []uint32{2}, kills(), "killed again while it runs")

	// A command that ended, and the next one, just started: not polled.
	states[2].commandEnd()
	states[2].commandBegin()
	w.look()
	require.Empty(t, kills())
	w.look()
	require.Equal(t, []uint32{2}, kills())

	// Between commands nothing is polled.
	states[2].commandEnd()
	w.look()
	w.look()
	require.Empty(t, kills())

	w.remove(states[2])
	states[2].commandBegin()
	w.look()
	w.look()
	require.Empty(t, kills(), "removed")
}

// TestSetDeadline checks which deadlines reach the socket: a deadline
// moved forward is set deadlineSlack later than asked, and those asked
// within that slack are not set again; earlier and zero deadlines are set
// as asked.
func TestSetDeadline(t *testing.T) {
	base := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	var cur time.Time
	var set []time.Time
	ask := func(d time.Time) {
		require.NoError(t, setDeadline(func(d time.Time) error { set = append(set, d); return nil }, &cur, d))
	}
	steps := []struct {
		ask  time.Time
		want []time.Time // set by the step
	}{
		{at(0), []time.Time{at(0)}},     // the first: as asked
		{at(10), []time.Time{at(60)}},   // forward: with the slack
		{at(30), nil},                   // within it
		{at(60), nil},                   // at it
		{at(61), []time.Time{at(111)}},  // past it
		{at(20), []time.Time{at(20)}},   // earlier than the slack allows: as asked
		{time.Time{}, []time.Time{{}}},  // none
		{at(500), []time.Time{at(500)}}, // after none: as asked
		{at(500), nil},                  // the same
		{at(470), nil},                  // earlier, within the slack: the one set is kept
	}
	for i, s := range steps {
		set = nil
		ask(s.ask)
		require.Equal(t, s.want, set, "step %d", i)
		if s.want != nil {
			require.Equal(t, s.want[0], cur)
		}
	}
}
