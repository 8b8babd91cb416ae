package server

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestConfigDefaults: a zero number or duration takes sqlshell serve's
// default; values sqlshell serve refuses, Start refuses too, naming the
// Config field, as errors of ErrConfig's kind.
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

	for _, bad := range []struct {
		cfg  Config
		want string
	}{
		{Config{MaxConnections: -1}, "Config.MaxConnections must be at least 1"},
		{Config{MaxAllowedPacket: 1023}, "Config.MaxAllowedPacket must be at least 1024"},
		{Config{IdleTimeout: -time.Second}, "Config.IdleTimeout must not be negative"},
		{Config{ConnectTimeout: -time.Second}, "Config.ConnectTimeout must not be negative"},
		{Config{WriteTimeout: -time.Second}, "Config.WriteTimeout must not be negative"},
		{Config{Listen: "nowhere"}, "Config.Listen"},
		{Config{Listen: "127.0.0.1:0"}, "Config.User must not be empty"},
		{Config{Listen: "127.0.0.1:0", User: "root", TLSCert: "x.pem"}, "Config.TLSCert and Config.TLSKey go together"},
		{Config{Listen: "127.0.0.1:0", User: "root", RequireSecureTransport: true}, "Config.RequireSecureTransport needs Config.TLSCert"},
	} {
		_, err := Start(bad.cfg)
		require.ErrorContains(t, err, bad.want, "%+v", bad.cfg)
		require.ErrorIs(t, err, ErrConfig, "%+v", bad.cfg)
	}
	// A store that cannot be opened is not a configuration error.
	file := t.TempDir() + "/file"
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = Start(Config{Listen: "127.0.0.1:0", User: "root", Data: file})
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrConfig)
}
