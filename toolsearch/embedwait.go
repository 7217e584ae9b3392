package toolsearch

import "context"

// WaitEmbedded returns once every tool added so far has its vector, or
// embedding has paused on a failure of the embedder, or ctx ends (its
// error). Tools are embedded in the background, and a search meanwhile
// ranks by BM25 alone (or by fewer vectors): a batch search or an
// evaluation that wants the dense ranking waits here first. Without
// Options.Embedder it returns at once.
func (ix *Index) WaitEmbedded(ctx context.Context) error {
	if ix.vectors == nil {
		return nil
	}
	return ix.vectors.wait(ctx)
}
