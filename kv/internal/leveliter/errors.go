package leveliter

import "errors"

// ErrNoIterator is returned (wrapped) through Error when an OpenFunc returns
// neither an iterator nor an error.
var ErrNoIterator = errors.New("leveliter: open returned no iterator")
