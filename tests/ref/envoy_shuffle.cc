// envoy_shuffle.cc - the order in which Envoy's bounded-load balancer tries
// hosts, computed with the C++ library's own std::mt19937, for
// tests/ref/envoy_shuffle_ref.sh.
//
// Reference: Envoy's source/common/upstream/thread_aware_lb_impl.cc,
// BoundedLoadHashingLoadBalancer::chooseHost: a vector host_index = 0..n-1,
// std::mt19937 seeded with the request's 64-bit hash, uniform_int(k) as
// random() / ((random.max() + 1) / k) redrawn while >= k, and for i = 0..n-1
// a swap of host_index[i] with host_index[i + uniform_int(n - i)], the host
// tried being host_index[i].  Written here from that description.
//
// stdin: lines "HASH NUM_HOSTS"; stdout: the NUM_HOSTS indexes in order.
#include <cstdint>
#include <iostream>
#include <random>
#include <utility>
#include <vector>

int main()
{
    std::uint64_t hash;
    std::uint32_t n;
    while (std::cin >> hash >> n) {
        std::vector<std::uint32_t> order(n);
        for (std::uint32_t i = 0; i < n; i++)
            order[i] = i;
        std::mt19937 engine(hash);
        auto below = [&engine](std::uint32_t k) {
            std::uint32_t x = k;
            while (x >= k)
                x = engine() / ((static_cast<std::uint64_t>(engine.max()) + 1u) / k);
            return x;
        };
        for (std::uint32_t i = 0; i < n; i++) {
            std::uint32_t j = below(n - i);
            std::swap(order[i], order[i + j]);
            std::cout << (i ? " " : "") << order[i];
        }
        std::cout << "\n";
    }
    return 0;
}
