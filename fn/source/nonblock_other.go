//go:build !unix

package source

const nonBlock = 0
