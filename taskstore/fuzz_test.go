package taskstore

import "testing"

// FuzzDecodeCursor: a cursor comes from the model, so any string must be
// either a cursor this package made or a clean error.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor("2026-01-02T03:04:05.000Z", "task_abcdefghijklmnop"))
	f.Add("")
	f.Add("!!!")
	f.Fuzz(func(t *testing.T, c string) {
		created, id, err := decodeCursor(c)
		if err != nil {
			return
		}
		if again := encodeCursor(formatTime(created), id); again == "" {
			t.Fatal("decoded cursor does not encode")
		}
	})
}
