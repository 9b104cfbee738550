#pragma once
// The pipeline stages an LLM request can serve. Each request names one, so servers, callables, caches and token
// accounting can tell them apart (HTTP header X-Relmem-Stage, `stage=` keyword for Python callables).
#include <string>
#include <vector>

namespace relmem {
namespace stage {
inline constexpr const char* kContextSwitch = "context_switch";  // does the question need the databases?
inline constexpr const char* kPlan = "plan";                     // database selection refinement + retrieval plan
inline constexpr const char* kCorrectValues = "correct_values";  // replace string literals by stored values
inline constexpr const char* kRefine = "refine";                 // Tool-SQL refinement from tool feedback
inline constexpr const char* kSelfCorrect = "self_correct";      // fix SQL from the error message
inline constexpr const char* kReturnType = "return_type";        // SQL result as the answer, or a text answer?
inline constexpr const char* kGenerateOutput = "generate_output";  // text answer from SQL results
inline constexpr const char* kRephrase = "rephrase";               // rephrase a question
inline constexpr const char* kHybridPropose = "hybrid_propose";  // propose virtual columns for missing facts
inline constexpr const char* kHybridFill = "hybrid_fill";        // fill virtual columns and relations
inline constexpr const char* kHybridMap = "hybrid_map";          // llm_map / llm_map_in in SQL
inline constexpr const char* kHybridQa = "hybrid_qa";            // llm_qa / llm_qa_in in SQL
inline constexpr const char* kHybridMatch = "hybrid_match";      // llm_match in SQL
}  // namespace stage

const std::vector<std::string>& known_stages();

// Throws relmem::Error unless `name` is empty or one of known_stages().
void check_stage(const std::string& name);

}  // namespace relmem
