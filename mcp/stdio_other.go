//go:build !unix

package mcp

import "os"

func stdioFiles() (in, out *os.File) { return os.Stdin, os.Stdout }
