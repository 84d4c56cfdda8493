#include "limit_command.hpp"

#include <fmt/format.h>

#include <limits>

#include "errors.hpp"
#include "signals.hpp"
#include "watch.hpp"

namespace rcoord::limit {

void to_json(nlohmann::ordered_json& j, const Decision& r) {
  j = {{"allowed", r.allowed},
       {"limit", r.limit},
       {"remaining", r.remaining},
       {"retry_after_ms", r.retry_after_ms},
       {"reset_after_ms", r.reset_after_ms}};
}
std::string to_text(const Decision& r) {
  return fmt::format(
      "allowed: {}\nlimit: {}\nremaining: {}\nretry_after_ms: {}\nreset_after_ms: {}\n", r.allowed,
      r.limit, r.remaining, r.retry_after_ms, r.reset_after_ms);
}

void to_json(nlohmann::ordered_json& j, const Waited& r) {
  to_json(j, r.decision);
  j["waited_ms"] = r.waited_ms;
}
std::string to_text(const Waited& r) {
  return to_text(r.decision) + fmt::format("waited_ms: {}\n", r.waited_ms);
}

void to_json(nlohmann::ordered_json& j, const Reset& r) {
  j = {{"reset", r.reset}, {"key", r.key}};
}
std::string to_text(const Reset& r) { return r.reset ? "reset" : ""; }

}  // namespace rcoord::limit

namespace rcoord::cmd {
namespace {

struct LimitArgs {
  std::string key;
  std::string rate;
  std::optional<std::int64_t> burst;
  std::int64_t cost = 1;
  std::string algo = "gcra";
  std::string max_wait = "forever";
  std::string watch;
};

limit::Params params_of(const LimitArgs& a) {
  Rate rate = rate_or_throw("--rate", a.rate);
  auto algo = limit::parse_algo(a.algo);
  if (!algo) {
    throw Error(kUsage, fmt::format("bad --algo '{}'", a.algo),
                "use gcra, token-bucket, sliding-window or fixed-window");
  }
  return limit::make_params(*algo, rate, a.burst, a.cost);
}

std::string seconds(std::int64_t ms) {
  return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000);
}

// The stderr note of a "no", in text mode.
void note_denied(Context& ctx, const LimitArgs& a, const limit::Params& p,
                 const limit::Decision& d) {
  if (p.never()) {
    ctx.out().note(fmt::format(
        "rcoord: limit '{}' never allows cost {}: it exceeds the burst {} (raise --burst or "
        "lower --cost)",
        a.key, p.cost, p.burst));
    return;
  }
  ctx.out().note(fmt::format("rcoord: limit '{}' denied: retry in {} ({} per {}, burst {})", a.key,
                             seconds(d.retry_after_ms), p.rate.count,
                             format_duration(p.rate.period), p.burst));
}

int run_check(Context& ctx, const LimitArgs& a) {
  auto p = params_of(a);
  auto d = limit::check(ctx.conn(), ctx.keys(), a.key, p);
  ctx.out().emit(d);
  if (!d.allowed) note_denied(ctx, a, p, d);
  return d.allowed ? kYes : kNo;
}

int run_status(Context& ctx, const LimitArgs& a) {
  auto p = params_of(a);
  return run_watched(ctx, a.watch, [&] {
    auto d = limit::status(ctx.conn(), ctx.keys(), a.key, p);
    ctx.out().emit(d);
    return d.allowed ? kYes : kNo;
  });
}

int run_wait(Context& ctx, const LimitArgs& a) {
  auto p = params_of(a);
  Millis max_wait = wait_or_throw("--max-wait", a.max_wait);
  signals::install();
  auto w = limit::wait(ctx.conn(), ctx.keys(), a.key, p, max_wait);
  ctx.out().emit(w);
  if (!w.decision.allowed) {
    if (p.never()) {
      note_denied(ctx, a, p, w.decision);
    } else {
      ctx.out().note(fmt::format(
          "rcoord: limit '{}' cannot allow this within --max-wait {} (next chance in {}); "
          "nothing was consumed",
          a.key, a.max_wait, seconds(w.decision.retry_after_ms)));
    }
  }
  return w.decision.allowed ? kYes : kNo;
}

int run_reset(Context& ctx, const LimitArgs& a) {
  limit::Reset r{limit::reset(ctx.conn(), ctx.keys(), a.key), a.key};
  ctx.out().emit(r);
  if (!r.reset) ctx.out().note(fmt::format("rcoord: limit '{}' had no state", a.key));
  return r.reset ? kYes : kNo;
}

template <typename Fn>
void on_parse(CLI::App* verb, Context& ctx, const std::shared_ptr<LimitArgs>& args, Fn fn) {
  verb->callback([&ctx, args, fn] { ctx.action = [&ctx, args, fn] { return fn(ctx, *args); }; });
}

void add_key(CLI::App* verb, LimitArgs& a) {
  verb->add_option("key", a.key, "The limit's name (one limit per key)")->required();
}

// --rate, --burst, --cost, --algo: what every deciding verb takes.
void add_shape(CLI::App* verb, LimitArgs& a) {
  add_key(verb, a);
  verb->add_option("--rate", a.rate, "Allowed rate: N/s, N/m, N/h or N/DUR (e.g. 100/10s)")
      ->type_name("N/PERIOD")
      ->required();
  // make_params says what a burst or cost below 1 means; here only the form is checked.
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  verb->add_option("--burst", a.burst, "Most cost allowed at once (default: N of the rate)")
      ->type_name("B")
      ->transform(decimal_in(kMin, kMax));
  verb->add_option("--cost", a.cost, "Cost of this request (default 1)")
      ->type_name("C")
      ->transform(decimal_in(kMin, kMax));
  verb->add_option("--algo", a.algo, "gcra (default), token-bucket, sliding-window or fixed-window")
      ->type_name("ALGO");
}

}  // namespace

void add_limit(CLI::App& app, Context& ctx) {
  auto* limit = app.add_subcommand("limit", "Rate limits decided on the server's clock");
  limit->require_subcommand(1);
  limit->footer(
      "Examples:\n"
      "  rcoord limit check deploys --rate 5/h || exit 1\n"
      "  rcoord limit wait api-calls --rate 10/s --max-wait 30s && curl ...");

  auto chk = std::make_shared<LimitArgs>();
  auto* c = limit->add_subcommand("check", "Take one request's cost if the rate allows it now");
  add_shape(c, *chk);
  c->footer("Example: rcoord limit check deploys --rate 5/h || exit 1");
  on_parse(c, ctx, chk, run_check);

  auto wt = std::make_shared<LimitArgs>();
  auto* w = limit->add_subcommand("wait", "Reserve the next allowed slot and sleep until it");
  add_shape(w, *wt);
  w->add_option("--max-wait", wt->max_wait,
                "Give up at once (consuming nothing) if the slot is further away than DUR "
                "(default forever)")
      ->type_name("DURATION|forever")
      ->check(kWaitCheck);
  w->footer("Example: rcoord limit wait api-calls --rate 10/s --max-wait 30s && curl ...");
  on_parse(w, ctx, wt, run_wait);

  auto st = std::make_shared<LimitArgs>();
  auto* s = limit->add_subcommand("status", "Show what is left now, without consuming");
  add_shape(s, *st);
  add_watch_option(s, st->watch);
  s->footer("Example: rcoord limit status deploys --rate 5/h");
  on_parse(s, ctx, st, run_status);

  auto rst = std::make_shared<LimitArgs>();
  auto* r = limit->add_subcommand("reset", "Delete a limit's state: everything is allowed again");
  add_key(r, *rst);
  r->footer("Example: rcoord limit reset deploys");
  on_parse(r, ctx, rst, run_reset);
}

}  // namespace rcoord::cmd
