// The read-write lock's read side (docs/algorithm.md, "Read-write locks";
// reader_scripts.hpp): readers share the writer's key, holding a hash of
// reader values there; a writer is a mutex on the same key.
#include "kinds/kind.hpp"
#include "scripts/script_calls.hpp"

namespace redlock::detail {
namespace {

class ReadWriteRules final : public KindRules {
 public:
  // (`shared` set, and no other kind's field: the table's well_formed.)
  [[nodiscard]] bool well_formed(const Lock& /*lock*/) const noexcept override { return true; }

  [[nodiscard]] ScriptCall attempt_call(const Lock& shape, const KeySpace& keys,
                                        const AttemptSetup& setup) const override {
    const std::string_view prefix = keys.key_prefix();
    const std::string marker = marker_key(prefix);
    const std::string recovering = recovering_key(prefix);
    const std::string fence = fence_key(prefix);
    const std::string key = lock_key(keys, shape.resource.str());
    return encode(
        ReadAcquireCall{.marker_key = marker,
                        .recovering_key = recovering,
                        .fence_key = fence,
                        .lock_key = key,
                        .value = setup.value,
                        .ttl_ms = setup.ttl_text,
                        .fence_field = setup.fenced ? std::string_view(shape.resource.str()) : "",
                        .amnesia_defence = keys.amnesia_defence()});
  }

  [[nodiscard]] ScriptCall extend_call(const Lock& lock, const KeySpace& keys,
                                       std::string ttl_text) const override {
    return one_key_extend(ScriptId::read_extend, lock, keys, std::move(ttl_text));
  }

  [[nodiscard]] ScriptCall release_call(const Lock& lock, const KeySpace& keys, bool announce,
                                        std::string_view /*rejoin*/) const override {
    const std::string_view prefix = keys.key_prefix();
    const std::string_view resource = lock.resource.str();
    const std::string key = lock_key(keys, resource);
    const std::string channel =
        announce ? release_channel(keys.key_prefix(), resource) : std::string();
    const std::string waiting = announce ? waiting_key(prefix, resource) : std::string();
    return encode(ReadReleaseCall{
        .lock_key = key, .value = lock.value.str(), .channel = channel, .waiting_set = waiting});
  }
};

}  // namespace

const KindRules& read_write_rules() noexcept {
  static const ReadWriteRules rules;
  return rules;
}

}  // namespace redlock::detail
