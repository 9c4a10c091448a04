//go:build !unix

package source

import "errors"

const nonBlock = 0

// syscallENOTDIR has no portable twin; errors.Is never matches it.
var syscallENOTDIR = errors.New("not a directory")
