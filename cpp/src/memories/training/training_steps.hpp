#pragma once
// What every trainer's loop uses: the thread count for a run, and the Adam optimizer.
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace relmem::training {

// Sets OpenMP's thread count for the lifetime of the object.
class ThreadScope {
 public:
  explicit ThreadScope(int threads) : previous_(omp_get_max_threads()) {
    if (threads > 0) omp_set_num_threads(threads);
  }
  ~ThreadScope() { omp_set_num_threads(previous_); }

 private:
  int previous_;
};

// Adam with a learning rate per parameter and decoupled decay toward `anchor` (the initial weights).
class Adam {
 public:
  Adam(std::vector<float> rates, float weight_decay, std::vector<float> anchor)
      : m_(rates.size(), 0.0f), v_(rates.size(), 0.0f), rates_(std::move(rates)), anchor_(std::move(anchor)),
        decay_(weight_decay) {}

  void step(std::vector<float>& values, const std::vector<float>& gradient) {
    constexpr float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
    ++t_;
    const float correction1 = 1.0f - std::pow(beta1, static_cast<float>(t_));
    const float correction2 = 1.0f - std::pow(beta2, static_cast<float>(t_));
    for (size_t i = 0; i < values.size(); ++i) {
      m_[i] = beta1 * m_[i] + (1.0f - beta1) * gradient[i];
      v_[i] = beta2 * v_[i] + (1.0f - beta2) * gradient[i] * gradient[i];
      values[i] -= rates_[i] * ((m_[i] / correction1) / (std::sqrt(v_[i] / correction2) + epsilon) +
                                decay_ * (values[i] - anchor_[i]));
    }
  }

 private:
  std::vector<float> m_, v_, rates_, anchor_;
  float decay_;
  int64_t t_ = 0;
};

}  // namespace relmem::training
