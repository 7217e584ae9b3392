// Package toolsearch finds MCP tools by what a caller asks for in its own
// words, so that a client facing thousands of tools can be shown the few
// it needs instead of every definition.
//
// # Indexing
//
// An [Index] holds tools ([Entry]: a server's [mcp.Tool] with optional
// category, related tools and keywords, which may also come in the
// tool's _meta under [MetaKey]). [New] returns an empty one; [Index.SetServer]
// replaces a whole server's tools, as a gateway does when an upstream's
// tools/list changes, and [Index.Add] adds tools, replacing those of the same name. Updates analyse
// outside the index's lock, so searches never wait for one. [LoadCatalog]
// reads tools from files for an offline index.
//
// Each tool is split into fields (server, name, title, first sentence,
// description, parameter names, parameter descriptions, metadata) whose
// text is analysed the same way as a query's: split into words at case
// changes and punctuation (getFileContents and get_file_contents both
// say get, file, contents), lower-cased, stop words dropped, and each
// word reduced to its Snowball English stem.
//
// # Ranking
//
// [Index.Search] ranks tools for a [Query] with BM25F: each field has a
// weight ([Weights], [DefaultWeights]), so a word in a tool's name counts
// more than one deep in its description. The query side adds what
// people mean but do not say: run-together word pairs, the words a
// common operation goes by ("show" implies list and get), and a bonus
// for a tool whose name the query covers.
//
// Lexical bridges ([Bridge]; [Options.NoBridges] leaves any out) add
// words the query means, each below the query's own: from WordNet
// ([BridgeWordNet]), from a curated software map, phrasal verbs included
// ([BridgeDomain], domain.txt: "k8s", "spun it up"), and from a broader
// list of how people say what tools do, the situations that call for
// them, and the kinds of service they name instead of a product
// ([BridgeEveryday], everyday.txt: "how big", "get rid of", "landlord",
// "in chat": slack, teams).
//
// Values in the query (a URL, a path, a number, an identifier) are
// evidence for tools whose parameters take them, and quoted text (a
// title, a message) counts a fraction of a word, as what a tool is given
// rather than what it does; the tools of a server the query names ("on
// GitHub") rank higher, and the product names a curated term gives for
// other servers are then left out; for a question, tools that write rank
// lower.
// With [Query.Servers] set, servers are ranked first and only the best
// servers' tools are returned. A search reads the first [MaxQueryLen]
// characters of a query. Each [Hit] carries the tool, its estimated
// token cost ([EstimateTokens]) and the tools worth offering beside it:
// configured as related, or often called with it ([Index.AddCoCall],
// [Index.Related]).
//
// # Embeddings
//
// Dense retrieval is optional. With [Options.Embedder] set (an
// [OpenAIEmbedder] for any OpenAI-compatible endpoint, or an
// [EmbedOptions] to add a [SQLiteCache] from [OpenCache] and tune
// batching), tools are embedded in the background and a query's vector
// ranking is fused with BM25's by reciprocal rank. The index answers with
// BM25 alone while the embedder is absent, slow or down.
package toolsearch
