#pragma once
// Meaning channels of the value memory: a written value matches a stored one because both are forms of one
// concept (value_lexicon.hpp: "Swiss" / 'SUI', "Alaska" / 'AK', "women" / 'F') or WordNet synonyms ("movie" /
// 'film'). Which channels apply depends on the column: its name ("sex", "country_code", "state") and the share of
// its values that belong to a channel decide, so "F" is female in `sex` and false in `IsOfficial`.
#include <cstdint>
#include <string>
#include <vector>

#include "relmem/memories/values/value_lexicon.hpp"
#include "relmem/memories/values/value_scoring.hpp"
#include "relmem/memories/values/value_store.hpp"

namespace relmem {

struct ColumnChannels {
  std::vector<Channel> concepts;  // concept channels that apply
  bool synonyms = false;          // WordNet synonyms apply (word-like text columns)
  bool applies(Channel channel) const;
};

// Name hints win: a column named for a channel ("Sex", "country_code", "IsOfficial") takes that channel only;
// otherwise each channel whose concepts cover at least 60% of the column's most frequent values applies (and only
// the best covering ones when several do, so a column of state codes is not read as country codes).
ColumnChannels column_channels(const DatabaseValues& d, const ColumnValues& column, const ValueLexicon& lexicon);

struct MeaningMatch {
  uint32_t id = 0;  // value id in the database
  double score = 0;
  std::string channel;  // channel_name(...) or "wordnet"
};

// Scores of meaning matches, below identity (spelling still decides between stored variants of one concept). A
// concept is decisive; WordNet is weaker (a word has many senses), and a hypernym or a similar adjective only ranks
// (whether that is enough to replace a literal is value_confidence.hpp's call). The lookup adds kMeaningTieBreak x the encoder cosine, so that of two synonyms the closer one wins.
constexpr double kConceptScore = 0.95;
constexpr double kSynonymScore = 0.86;
constexpr double kRelatedScore = 0.72;
constexpr double kDistantScore = 0.62;  // two hypernym links: "kitty" / 'cat'
// The score of a WordNet synonym joined by `links` links (ValueLexicon::Synonym).
double synonym_score(int links);
constexpr double kMeaningTieBreak = 0.04;

// Stored values of `column` that mean what `written` means through a channel that applies to the column, each
// value once with its best channel.
std::vector<MeaningMatch> meaning_matches(const DatabaseValues& d, const ColumnValues& column,
                                          const PreparedValue& written, const ValueLexicon& lexicon,
                                          const ColumnChannels& channels);

}  // namespace relmem
