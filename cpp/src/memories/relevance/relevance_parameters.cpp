#include <string>

#include "relmem/memories/relevance/relevance_model.hpp"

namespace relmem {

int64_t RelevanceConfig::parameter_count() const {
  const int64_t p = projection_dim, d = input_dim, h = hidden_dim, f = feature_dim();
  return 2 * p * d + h * f + h + h + scalar_features + 1;
}

void RelevanceConfig::validate() const {
  if (input_dim <= 0 || projection_dim <= 0 || hidden_dim <= 0) {
    throw Error("relevance model sizes must be positive (input " + std::to_string(input_dim) + ", projection " +
                std::to_string(projection_dim) + ", hidden " + std::to_string(hidden_dim) + ")");
  }
  if (scalar_features != kScalarFeatures && scalar_features != kScalarFeaturesWithoutStanding &&
      scalar_features != kScalarFeaturesWithoutCoverage &&
      scalar_features != kScalarFeaturesWithoutUntrainedScore &&
      scalar_features != kScalarFeaturesWithoutColumnsAndValues) {
    throw Error("relevance model: " + std::to_string(scalar_features) + " scalar features (expected " +
                std::to_string(kScalarFeatures) + ", or " + std::to_string(kScalarFeaturesWithoutStanding) + ", " +
                std::to_string(kScalarFeaturesWithoutCoverage) + ", " +
                std::to_string(kScalarFeaturesWithoutUntrainedScore) + " or " +
                std::to_string(kScalarFeaturesWithoutColumnsAndValues) + " in older models)");
  }
}

RelevanceParameters::RelevanceParameters(const RelevanceConfig& config)
    : p_(config.projection_dim),
      d_(config.input_dim),
      h_(config.hidden_dim),
      f_(config.feature_dim()),
      s_(config.scalar_features),
      values_(static_cast<size_t>(config.parameter_count()), 0.0f) {
  config.validate();
}

// Layout of values_: Wq | Wd | W1 | b1 | w2 | ws | b2.
RelevanceParameters::MatrixView RelevanceParameters::question_projection() { return {values_.data(), p_, d_}; }
RelevanceParameters::MatrixView RelevanceParameters::database_projection() {
  return {values_.data() + static_cast<int64_t>(p_) * d_, p_, d_};
}
RelevanceParameters::MatrixView RelevanceParameters::hidden_weights() {
  return {values_.data() + 2 * static_cast<int64_t>(p_) * d_, h_, f_};
}
RelevanceParameters::VectorView RelevanceParameters::hidden_bias() {
  return {values_.data() + 2 * static_cast<int64_t>(p_) * d_ + static_cast<int64_t>(h_) * f_, h_};
}
RelevanceParameters::VectorView RelevanceParameters::output_weights() { return {hidden_bias().data() + h_, h_}; }
RelevanceParameters::VectorView RelevanceParameters::scalar_weights() {
  return {output_weights().data() + h_, s_};
}
float& RelevanceParameters::output_bias() { return values_.back(); }

RelevanceParameters::ConstMatrixView RelevanceParameters::question_projection() const {
  return {values_.data(), p_, d_};
}
RelevanceParameters::ConstMatrixView RelevanceParameters::database_projection() const {
  return {values_.data() + static_cast<int64_t>(p_) * d_, p_, d_};
}
RelevanceParameters::ConstMatrixView RelevanceParameters::hidden_weights() const {
  return {values_.data() + 2 * static_cast<int64_t>(p_) * d_, h_, f_};
}
RelevanceParameters::ConstVectorView RelevanceParameters::hidden_bias() const {
  return {values_.data() + 2 * static_cast<int64_t>(p_) * d_ + static_cast<int64_t>(h_) * f_, h_};
}
RelevanceParameters::ConstVectorView RelevanceParameters::output_weights() const {
  return {hidden_bias().data() + h_, h_};
}
RelevanceParameters::ConstVectorView RelevanceParameters::scalar_weights() const {
  return {output_weights().data() + h_, s_};
}
float RelevanceParameters::output_bias() const { return values_.back(); }

void RelevanceParameters::set_zero() { std::fill(values_.begin(), values_.end(), 0.0f); }

}  // namespace relmem
