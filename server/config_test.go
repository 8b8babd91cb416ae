package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestConfigDefaults: a zero number or duration takes sqlshell serve's
// default; values sqlshell serve refuses, Start refuses too.
func TestConfigDefaults(t *testing.T) {
	cfg, err := Config{}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, 151, cfg.MaxConnections)
	require.Equal(t, 8*time.Hour, cfg.IdleTimeout)
	require.Equal(t, 10*time.Second, cfg.ConnectTimeout)
	require.Equal(t, 60*time.Second, cfg.WriteTimeout)
	require.Equal(t, 64<<20, cfg.MaxAllowedPacket)
	require.NotNil(t, cfg.Logger)

	set := Config{MaxConnections: 3, IdleTimeout: time.Minute, ConnectTimeout: time.Second, WriteTimeout: 2 * time.Second, MaxAllowedPacket: 4096}
	got, err := set.withDefaults()
	require.NoError(t, err)
	set.Logger = got.Logger
	require.Equal(t, set, got, "set values are kept")

	for _, bad := range []Config{
		{MaxConnections: -1},
		{MaxAllowedPacket: 1023},
		{IdleTimeout: -time.Second},
		{ConnectTimeout: -time.Second},
		{WriteTimeout: -time.Second},
	} {
		_, err := Start(bad)
		require.ErrorContains(t, err, "must be at least", "%+v", bad)
	}
}
