#pragma once
// The options of a selection memory, and the one list of them by name from which the Python keywords, their
// documentation and a saved memory's manifest are made.
#include <cstdint>
#include <string>

#include "relmem/memories/relevance/similarity_fusion.hpp"

namespace relmem {

struct SelectionOptions {
  int samples_per_column = 3;  // card sample values per text column
  int max_value_chars = 40;
  SimilarityFusion fusion = SimilarityFusion::Mean;  // untrained scoring
  // Collections larger than this are narrowed to the databases whose card or tables the sentence encoder ranks
  // among the top `candidates` (cards) and 4 x `candidates` (tables) of the pool; smaller ones are scored in full.
  int candidates = 100;
  // The pool: every database of a collection of at most this many, else the `pool` databases whose cards score best
  // on int8-quantized card vectors (an approximate pass that streams a quarter of the bytes), or on fp16 ones on a
  // CUDA `device`. The pool's cards and tables are then scored exactly.
  int pool = 2000;
  // Where the pool's approximate pass runs: "cpu", or "cuda" / "cuda:N", where the memory keeps an fp16 copy of its
  // card vectors on that GPU and finds the pools of a batch of questions in one search. Not saved: a folder opens on
  // "cpu" (on a machine without a GPU too); SelectionMemory::set_device moves a memory.
  std::string device = "cpu";
  // Encoder spec of the lexical channel ("" for none). Its vectors are stored sparse.
  std::string lexical_encoder = "hashing:4096";
  // Distinct text values indexed per column for the value evidence (0: none). Longer than max_value_chars: skipped.
  int64_t values_per_column = 1000;
  // Storage of the column vectors, most of the memory's bytes: "int8" (a quarter of "fp32"), "fp16" or "fp32".
  std::string column_dtype = "int8";
  // Storage of the table vectors, read for every table of the pool: "int8" (recall@k at 100,000 databases and on
  // Spider dev as with "fp32": docs/selection.md), "fp16" or "fp32".
  std::string table_dtype = "int8";
  // The lexical texts carry other words for table and column names (WordNet synonyms, expanded abbreviations) when
  // WordNet is installed (wordnet.hpp).
  bool synonyms = true;
  // Questions are cut into sentence parts ("How many singers? Which cars ...?"; question_parts.hpp); parts the asker
  // marked (Q1: ..., 1. ...) are split either way.
  bool split_sentences = true;
};

// An option as named outside C++ (the Python keyword and the manifest key), its Python documentation, and whether a
// saved memory's manifest holds it (the device belongs to the machine, not to the memory).
struct SelectionOptionName {
  const char* name;
  const char* doc;
  bool saved;
};

// Calls visit(name, member) for every option of `options` (const or not), in the order of the Python keywords.
template <typename Options, typename Visit>
void for_each_selection_option(Options& options, Visit&& visit) {
  visit(SelectionOptionName{"samples_per_column", "card sample values per text column", true},
        options.samples_per_column);
  visit(SelectionOptionName{"max_value_chars", "longest sample or indexed value, in characters", true},
        options.max_value_chars);
  visit(SelectionOptionName{"fusion", "untrained fusion of card and table cosines: 'mean', 'max', 'card' or 'table'",
                            true},
        options.fusion);
  visit(SelectionOptionName{"candidates",
                            "collections larger than this are narrowed to the databases among the pool's top "
                            "`candidates` cards and 4 x `candidates` tables",
                            true},
        options.candidates);
  visit(SelectionOptionName{"lexical_encoder", "the lexical channel's encoder spec ('' for none)", true},
        options.lexical_encoder);
  visit(SelectionOptionName{"pool",
                            "collections larger than this are first narrowed to the pool databases whose "
                            "int8-quantized cards score best (fp16 cards on a CUDA device)",
                            true},
        options.pool);
  visit(SelectionOptionName{"values_per_column",
                            "distinct text values per column indexed as evidence when a question names them (0 for "
                            "none)",
                            true},
        options.values_per_column);
  visit(SelectionOptionName{"column_dtype", "storage of the column vectors: 'int8', 'fp16' or 'fp32'", true},
        options.column_dtype);
  visit(SelectionOptionName{"table_dtype", "storage of the table vectors: 'int8', 'fp16' or 'fp32'", true},
        options.table_dtype);
  visit(SelectionOptionName{"synonyms",
                            "the lexical texts carry WordNet synonyms of table and column names (when WordNet is "
                            "installed)",
                            true},
        options.synonyms);
  visit(SelectionOptionName{"split_sentences",
                            "questions are ranked by their sentence parts too (marked parts, Q1: ... or 1. ..., "
                            "always)",
                            true},
        options.split_sentences);
  visit(SelectionOptionName{"device", "where the pool's approximate pass runs: 'cpu', 'cuda' or 'cuda:N'", false},
        options.device);
}

}  // namespace relmem
