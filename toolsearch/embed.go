package toolsearch

import "context"

// Embedder turns texts into vectors.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

type vectorSet struct{ e Embedder }

func newVectorSet(e Embedder) *vectorSet                                        { return &vectorSet{e: e} }
func (v *vectorSet) want([]*doc)                                                {}
func (v *vectorSet) query(context.Context, string) []float32                    { return nil }
func (v *vectorSet) nearest([]float32, []*doc, func(string) bool, int) []scored { return nil }
