#pragma once
// Where installed models are found: one answer for C++ and Python (python/relmem/encoders.py calls these through the
// bindings), so that both pick the same USE-lite folder whatever RELMEM_HOME and RELMEM_USE_LITE_DIR say.
#include <string>
#include <vector>

namespace relmem {

// $RELMEM_HOME when set and not empty, else $HOME/.cache/relmem; "" when neither is set.
std::string relmem_home();

// The folders searched for USE-lite's weights, in order: $RELMEM_USE_LITE_DIR (when set and not empty), then
// relmem_home()/models/use-lite (when there is a home).
std::vector<std::string> use_lite_search_path();

// The first folder of use_lite_search_path() holding a model.json; "" when none does.
std::string find_use_lite_dir();

// relmem_home()/models/<name> when scripts/install_models.sh has completed an install there (an INSTALLED file);
// "" otherwise.
std::string find_installed_model_dir(const std::string& name);

}  // namespace relmem
