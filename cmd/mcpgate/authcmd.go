package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/auth"
)

func newAuthCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Make entries for the user and API key files of `serve --auth-users/--auth-keys`",
	}
	cmd.AddCommand(newHashPasswordCmd(), newNewKeyCmd())
	return cmd
}

var credName = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,64}$`)

func checkName(name string) error {
	if !credName.MatchString(name) {
		return fmt.Errorf("name %q: use 1 to 64 letters, digits, '.', '_', '@' or '-'", name)
	}
	return nil
}

func newHashPasswordCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "hash-password USER",
		Short: "Read a password from standard input and print the user-file line for it",
		Long: `Read a password (the first line of standard input) and print
"USER:bcrypt-hash", a line for the file given to serve --auth-users.
The password itself is never stored.

  printf '%s\n' "$PASSWORD" | mcpgate auth hash-password alice >> users`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkName(args[0]); err != nil {
				return err
			}
			line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
			if err != nil && line == "" {
				return errors.New("no password on standard input")
			}
			pw := strings.TrimRight(line, "\r\n")
			if pw == "" {
				return errors.New("the password is empty")
			}
			hash, err := auth.HashPassword(pw)
			if err != nil {
				return err // bcrypt refuses passwords over 72 bytes
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s:%s\n", args[0], hash)
			return nil
		},
	}
}

func newNewKeyCmd() *cobra.Command {
	var appendTo string
	cmd := &cobra.Command{
		Use:   "new-key NAME",
		Short: "Make a random API key and its key-file line",
		Long: `Make a random API key named NAME. The key is printed once; only its
SHA-256 goes in the key file given to serve --auth-keys. Clients send the key
as "Authorization: Bearer KEY".

With --append FILE the line is added to FILE and only the key is printed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkName(args[0]); err != nil {
				return err
			}
			key, line := auth.NewAPIKey(args[0])
			out := cmd.OutOrStdout()
			if appendTo == "" {
				fmt.Fprintf(out, "key (give it to the client; it is not kept): %s\nkey-file line: %s\n", key, line)
				return nil
			}
			f, err := os.OpenFile(appendTo, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintln(f, line); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintln(out, key)
			return nil
		},
	}
	cmd.Flags().StringVar(&appendTo, "append", "", "append the key-file line to this file (created with mode 0600)")
	return cmd
}
