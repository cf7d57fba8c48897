// Latency of the rendezvous stores: TCPStore over loopback (one server thread, one client per
// benchmark thread) and the in-process HashStore. Run from the build tree:
//
//   bin/store_bench                                  # every benchmark
//   bin/store_bench --benchmark_filter=TCPStore/Add  # one family
//
// Each TCPStore op is one request/reply round trip (set, get of a present key, add, check,
// wait on present keys); Connect is connect + HELLO handshake. Threads>1 rows run one client
// per thread against the same server, so they show how the server's single poll loop scales.
#include <benchmark/benchmark.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "crew/distributed/store/hash_store.h"
#include "crew/distributed/store/tcp_store.h"
#include "crew/distributed/store/tcp_store_server.h"

namespace {

using crew::dist::HashStore;
using crew::dist::TCPStore;
using crew::dist::TCPStoreOptions;
using crew::dist::TCPStoreServer;

// One server for the whole program (its thread serves every benchmark's clients).
TCPStoreServer& server() {
  static TCPStoreServer s({.insecure = true});
  return s;
}

std::unique_ptr<TCPStore> make_client() {
  TCPStoreOptions o;
  o.port = server().port();
  o.timeout = std::chrono::seconds(30);
  o.connect_timeout = std::chrono::seconds(10);
  return std::make_unique<TCPStore>("127.0.0.1", o);
}

std::string thread_key(const benchmark::State& state, const char* what) {
  return std::string("bench/") + what + "/" + std::to_string(state.thread_index());
}

void TCPStore_Set(benchmark::State& state) {
  auto client = make_client();
  const std::vector<uint8_t> value(static_cast<size_t>(state.range(0)), 0x5a);
  const std::string key = thread_key(state, "set");
  for (auto _ : state) client->set(key, value);
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(TCPStore_Set)->Arg(8)->Arg(4096)->Arg(1 << 20)->UseRealTime();

void TCPStore_Get(benchmark::State& state) {
  auto client = make_client();
  const std::string key = thread_key(state, "get");
  client->set(key, std::vector<uint8_t>(static_cast<size_t>(state.range(0)), 0x5a));
  for (auto _ : state) benchmark::DoNotOptimize(client->get(key));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(TCPStore_Get)->Arg(8)->Arg(4096)->Arg(1 << 20)->UseRealTime();

void TCPStore_Add(benchmark::State& state) {
  auto client = make_client();
  for (auto _ : state) benchmark::DoNotOptimize(client->add("bench/counter", 1));
}
BENCHMARK(TCPStore_Add)->ThreadRange(1, 16)->UseRealTime();

void TCPStore_Check(benchmark::State& state) {
  auto client = make_client();
  const std::string key = thread_key(state, "check");
  client->set(key, std::string("1"));
  for (auto _ : state) benchmark::DoNotOptimize(client->check({key}));
}
BENCHMARK(TCPStore_Check)->UseRealTime();

void TCPStore_WaitPresent(benchmark::State& state) {
  auto client = make_client();
  std::vector<std::string> keys;
  for (int i = 0; i < state.range(0); ++i) {
    keys.push_back(thread_key(state, "wait") + "/" + std::to_string(i));
    client->set(keys.back(), std::string("1"));
  }
  for (auto _ : state) client->wait(keys, std::chrono::seconds(30));
}
BENCHMARK(TCPStore_WaitPresent)->Arg(1)->Arg(16)->UseRealTime();

void TCPStore_Connect(benchmark::State& state) {
  server();
  for (auto _ : state) benchmark::DoNotOptimize(make_client());
}
BENCHMARK(TCPStore_Connect)->UseRealTime();

void HashStore_Add(benchmark::State& state) {
  static HashStore store;
  for (auto _ : state) benchmark::DoNotOptimize(store.add("counter", 1));
}
BENCHMARK(HashStore_Add)->ThreadRange(1, 4)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
