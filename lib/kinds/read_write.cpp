// The read-write lock's read side (docs/algorithm.md, "Read-write locks";
// reader_scripts.hpp): readers share the writer's key, holding a hash of
// reader values there; a writer is a mutex on the same key.
#include "kinds/kind.hpp"

namespace redlock::detail {
namespace {

class ReadWriteRules final : public KindRules {
 public:
  // (`shared` set, and no other kind's field: the table's well_formed.)
  [[nodiscard]] bool well_formed(const Lock& /*lock*/) const noexcept override { return true; }

  // read_acquire — KEYS: marker, recovering key, fence hash, lock key.
  // ARGV: value, ttl ms, fence field ("" unfenced), amnesia defence.
  [[nodiscard]] ScriptCall attempt_call(const Lock& shape, const LockConfig& keys,
                                        const AttemptSetup& setup) const override {
    const std::string_view prefix = keys.key_prefix;
    ScriptCall call;
    call.script = &script(ScriptId::read_acquire);
    call.keys = {marker_key(prefix), recovering_key(prefix), fence_key(prefix),
                 lock_key(keys, shape.resource.str())};
    call.args = {"", std::string(setup.ttl_text),
                 setup.fenced ? shape.resource.str() : std::string(),
                 keys.amnesia_defence ? "1" : "0"};
    return call;
  }

  [[nodiscard]] ScriptCall extend_call(const Lock& lock, const LockConfig& keys,
                                       std::string ttl_text) const override {
    return one_key_extend(ScriptId::read_extend, lock, keys, std::move(ttl_text));
  }

  // read_release — KEYS: lock key. ARGV: value, release channel, waiting
  // line (both "" unannounced).
  [[nodiscard]] ScriptCall release_call(const Lock& lock, const LockConfig& keys, bool announce,
                                        std::string_view /*rejoin*/) const override {
    const std::string_view prefix = keys.key_prefix;
    ScriptCall call;
    call.script = &script(ScriptId::read_release);
    call.keys = {lock_key(keys, lock.resource.str())};
    call.args = {lock.value.str(),
                 announce ? release_channel(prefix, lock.resource.str()) : std::string(),
                 announce ? waiting_key(prefix, lock.resource.str()) : std::string()};
    return call;
  }
};

}  // namespace

const KindRules& read_write_rules() noexcept {
  static const ReadWriteRules rules;
  return rules;
}

}  // namespace redlock::detail
