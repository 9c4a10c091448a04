//go:build unix

package source

import "syscall"

// nonBlock keeps an open of a FIFO that appeared after the type check from
// waiting for a writer; on a regular file it changes nothing.
const nonBlock = syscall.O_NONBLOCK

// syscallENOTDIR: a path component that is a file, not a directory.
const syscallENOTDIR = syscall.ENOTDIR
