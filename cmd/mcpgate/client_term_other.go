//go:build !unix

package main

import "os"

// terminalColumns returns 0: the width is taken from $COLUMNS, else 80.
func terminalColumns(*os.File) int { return 0 }
