#include "limit_command.hpp"

#include <fmt/format.h>

#include <limits>

#include "deprecated_wait.hpp"
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

std::string rate_text(const Rate& rate) {
  if (rate.period == Millis(1'000)) return fmt::format("{}/s", rate.count);
  if (rate.period == Millis(60'000)) return fmt::format("{}/m", rate.count);
  if (rate.period == Millis(3'600'000)) return fmt::format("{}/h", rate.count);
  return fmt::format("{}/{}", rate.count, format_duration(rate.period));
}

namespace {

nlohmann::ordered_json rates_json(const MultiDecision& r) {
  auto rates = nlohmann::ordered_json::array();
  for (const auto& one : r.rates) {
    nlohmann::ordered_json decision;
    to_json(decision, one.decision);
    nlohmann::ordered_json j{{"rate", rate_text(one.rate)}};
    j.update(decision);
    rates.push_back(std::move(j));
  }
  return rates;
}

// One line per rate, after the whole answer's lines.
std::string rates_text(const MultiDecision& r) {
  std::string out;
  for (const auto& one : r.rates) {
    const Decision& d = one.decision;
    out += fmt::format(
        "rate: {} allowed={} limit={} remaining={} retry_after_ms={} reset_after_ms={}\n",
        rate_text(one.rate), d.allowed, d.limit, d.remaining, d.retry_after_ms, d.reset_after_ms);
  }
  return out;
}

}  // namespace

void to_json(nlohmann::ordered_json& j, const MultiDecision& r) {
  to_json(j, r.decision);
  j["rates"] = rates_json(r);
}
std::string to_text(const MultiDecision& r) { return to_text(r.decision) + rates_text(r); }

void to_json(nlohmann::ordered_json& j, const MultiWaited& r) {
  to_json(j, r.result.decision);
  j["waited_ms"] = r.waited_ms;
  j["rates"] = rates_json(r.result);
}
std::string to_text(const MultiWaited& r) {
  return to_text(r.result.decision) + fmt::format("waited_ms: {}\n", r.waited_ms) +
         rates_text(r.result);
}

void to_json(nlohmann::ordered_json& j, const Reset& r) {
  j = {{"reset", r.reset}, {"name", r.key}, {"key", r.key}};  // key: deprecated alias
}
std::string to_text(const Reset& r) { return r.reset ? "reset" : ""; }

}  // namespace rcoord::limit

namespace rcoord::cmd {
namespace {

struct LimitArgs {
  std::string key;
  std::vector<std::string> rates;
  std::optional<std::int64_t> burst;
  std::int64_t cost = 1;
  std::string algo = "gcra";
  Millis max_wait = Millis::max();  // forever
  std::optional<Millis> watch;
};

// The decision parameters of every --rate, in the order given.
std::vector<limit::Params> params_of(const LimitArgs& a) {
  auto algo = limit::parse_algo(a.algo);
  if (!algo) {
    throw Error(kUsage, fmt::format("bad --algo '{}'", a.algo),
                "use gcra, token-bucket, sliding-window or fixed-window");
  }
  if (a.rates.size() > limit::kMaxRates) {
    throw Error(kUsage,
                fmt::format("{} --rate options: a limit takes at most {}", a.rates.size(),
                            limit::kMaxRates),
                "keep the rates that matter, e.g. --rate 10/s --rate 1000/h");
  }
  if (a.rates.size() > 1 && a.burst) {
    throw Error(kUsage, "--burst cannot be given with several --rate options",
                "each rate allows its own N at once: state a burst as a rate, e.g. --rate 20/2s");
  }
  std::vector<limit::Params> out;
  for (const auto& text : a.rates) {
    Rate rate = rate_or_throw("--rate", text);
    for (const auto& p : out) {
      if (p.rate == rate) {
        throw Error(kUsage, fmt::format("--rate {} is given twice", text), "give each rate once");
      }
    }
    out.push_back(limit::make_params(*algo, rate, a.burst, a.cost));
  }
  return out;
}

// The stderr note of a "no" over several rates, in text mode: which rates denied.
void note_denied(Context& ctx, const LimitArgs& a, const std::vector<limit::Params>& ps,
                 const limit::MultiDecision& d) {
  for (const auto& p : ps) {
    if (!p.never()) continue;
    ctx.out().note(fmt::format(
        "rcoord: limit '{}' never allows cost {}: it exceeds the {} of --rate {} (lower --cost)",
        a.key, p.cost, p.burst, limit::rate_text(p.rate)));
    return;
  }
  std::vector<std::string> denied;
  for (const auto& r : d.rates) {
    if (!r.decision.allowed) denied.push_back(limit::rate_text(r.rate));
  }
  ctx.out().note(fmt::format("rcoord: limit '{}' denied by {}: retry in {}", a.key,
                             fmt::join(denied, ", "), seconds_text(d.decision.retry_after_ms)));
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
                             seconds_text(d.retry_after_ms), p.rate.count,
                             format_duration(p.rate.period), p.burst));
}

int run_check(Context& ctx, const LimitArgs& a) {
  auto ps = params_of(a);
  if (ps.size() > 1) {
    auto d = limit::check(ctx.conn(), ctx.keys(), a.key, ps);
    emit_made(ctx, named(a.key, d),
              d.decision.allowed ? fmt::format("limit '{}': allowed and counted", a.key) : "");
    if (!d.decision.allowed) note_denied(ctx, a, ps, d);
    return d.decision.allowed ? kYes : kNo;
  }
  const auto& p = ps.front();
  auto d = limit::check(ctx.conn(), ctx.keys(), a.key, p);
  emit_made(ctx, named(a.key, d),
            d.allowed ? fmt::format("limit '{}': allowed and counted", a.key) : "");
  if (!d.allowed) note_denied(ctx, a, p, d);
  return d.allowed ? kYes : kNo;
}

int run_status(Context& ctx, const LimitArgs& a) {
  auto ps = params_of(a);
  if (ps.size() > 1) {
    return run_watched(ctx, a.watch, [&] {
      auto d = limit::status(ctx.conn(), ctx.keys(), a.key, ps);
      ctx.out().emit(named(a.key, d));
      return d.decision.allowed ? kYes : kNo;
    });
  }
  const auto& p = ps.front();
  return run_watched(ctx, a.watch, [&] {
    auto d = limit::status(ctx.conn(), ctx.keys(), a.key, p);
    ctx.out().emit(named(a.key, d));
    return d.allowed ? kYes : kNo;
  });
}

// `limit wait` with several rates (limit::wait): a "no" says why, a cost that some rate never
// allows, or no chance within --wait.
int run_wait_rates(Context& ctx, const LimitArgs& a, const std::vector<limit::Params>& ps) {
  auto w = limit::wait(ctx.conn(), ctx.keys(), a.key, ps, a.max_wait);
  emit_made(ctx, named(a.key, w),
            w.result.decision.allowed ? fmt::format("limit '{}': allowed and counted", a.key) : "");
  const auto& d = w.result.decision;
  if (d.allowed) return kYes;
  if (d.retry_after_ms < 0) {
    note_denied(ctx, a, ps, w.result);
  } else {
    ctx.out().note(
        fmt::format("rcoord: limit '{}' cannot allow this within --wait {} (next chance in {}); "
                    "nothing was consumed",
                    a.key, format_wait(a.max_wait), seconds_text(d.retry_after_ms)));
  }
  return kNo;
}

int run_wait(Context& ctx, const LimitArgs& a) {
  auto ps = params_of(a);
  signals::install();
  if (ps.size() > 1) return run_wait_rates(ctx, a, ps);
  const auto& p = ps.front();
  auto w = limit::wait(ctx.conn(), ctx.keys(), a.key, p, a.max_wait);
  emit_made(ctx, named(a.key, w),
            w.decision.allowed ? fmt::format("limit '{}': allowed and counted", a.key) : "");
  if (!w.decision.allowed) {
    if (p.never()) {
      note_denied(ctx, a, p, w.decision);
    } else {
      ctx.out().note(
          fmt::format("rcoord: limit '{}' cannot allow this within --wait {} (next chance in {}); "
                      "nothing was consumed",
                      a.key, format_wait(a.max_wait), seconds_text(w.decision.retry_after_ms)));
    }
  }
  return w.decision.allowed ? kYes : kNo;
}

int run_reset(Context& ctx, const LimitArgs& a) {
  limit::Reset r{limit::reset(ctx.conn(), ctx.keys(), a.key), a.key};
  emit_made(ctx, r, r.reset ? fmt::format("limit '{}': reset", a.key) : "");
  if (!r.reset) ctx.out().note(fmt::format("rcoord: limit '{}' had no state", a.key));
  return r.reset ? kYes : kNo;
}

void add_key(CLI::App* verb, LimitArgs& a) {
  verb->add_option("key", a.key, "The limit's name (one limit per key)")->required();
}

// --rate, --burst, --cost, --algo: what every deciding verb takes.
void add_shape(CLI::App* verb, LimitArgs& a) {
  add_key(verb, a);
  verb->add_option("--rate", a.rates,
                   "Allowed rate: N/s, N/m, N/h or N/DUR (e.g. 100/10s); repeat it for several "
                   "rates at once, all of which must allow (e.g. --rate 10/s --rate 1000/h)")
      ->type_name("N/PERIOD")
      ->required()
      ->take_all()
      ->allow_extra_args(false);
  // make_params says what a burst or cost below 1 means; here only the form is checked.
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  verb->add_option("--burst", a.burst,
                   "Most cost allowed at once (default: N of the rate; one --rate only)")
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
      "  rcoord limit wait api-calls --rate 10/s --wait 30s && curl ...");

  auto chk = std::make_shared<LimitArgs>();
  auto* c = limit->add_subcommand("check", "Take one request's cost if the rate allows it now");
  add_shape(c, *chk);
  c->footer(
      "Example: rcoord limit check deploys --rate 5/h || exit 1\n"
      "         rcoord limit check api --rate 10/s --rate 1000/h   # both must allow; a denial "
      "consumes from neither");
  on_parse(c, ctx, chk, run_check);

  auto wt = std::make_shared<LimitArgs>();
  auto* w = limit->add_subcommand("wait", "Reserve the next allowed slot and sleep until it");
  add_shape(w, *wt);
  auto* wait = add_wait(w, "-w,--wait", wt->max_wait,
                        "Give up at once (consuming nothing) if the slot is further away than "
                        "DUR (default forever)");
  add_deprecated_wait(w, "--max-wait", wait, wt->max_wait, ctx);
  w->footer(
      "Example: rcoord limit wait api-calls --rate 10/s --wait 30s && curl ...\n"
      "         rcoord limit wait api-calls --rate 10/s --rate 1000/h --wait 1m && curl ...");
  on_parse(w, ctx, wt, run_wait);

  auto st = std::make_shared<LimitArgs>();
  auto* s = limit->add_subcommand("status", "Show what is left now, without consuming");
  add_shape(s, *st);
  add_watch_option(s, st->watch);
  s->footer(
      "Example: rcoord limit status deploys --rate 5/h\n"
      "         rcoord --json limit status api --rate 10/s --rate 1000/h   # adds \"rates\"");
  on_parse(s, ctx, st, run_status);

  auto rst = std::make_shared<LimitArgs>();
  auto* r = limit->add_subcommand("reset", "Delete a limit's state: everything is allowed again");
  add_key(r, *rst);
  r->footer("Example: rcoord limit reset deploys");
  on_parse(r, ctx, rst, run_reset);
}

}  // namespace rcoord::cmd
