package sqlstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUsersPersist(t *testing.T) {
	d := openTestDB(t, t.TempDir())
	got, err := d.s.Users()
	require.NoError(t, err)
	require.Nil(t, got, "none saved yet")
	require.NoError(t, d.s.SetUsers([]byte("accounts")))
	d.reopen()
	got, err = d.s.Users()
	require.NoError(t, err)
	require.Equal(t, []byte("accounts"), got)
	require.NoError(t, d.s.Close())
	_, err = d.s.Users()
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, d.s.SetUsers(nil), ErrClosed)
}
