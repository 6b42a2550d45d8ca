// The listen queue of sluice's sockets: a listener's `backlog` reaches the kernel, and without it
// the queue is net.core.somaxconn long (libevent's listener used to call listen(fd, 128) again and
// cut any backlog to 128: 5,000 back-to-back connects then stalled on SYN retransmissions).
// The queue length is read the way `ss -ltn` shows it (its Send-Q): inet_diag over netlink,
// whose idiag_wqueue is a listening socket's maximum backlog.
#include <gtest/gtest.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "test/integration/echo_fixture.h"

namespace sluice::test {
namespace {

constexpr int kTcpListen = 10;  // TCP_LISTEN in the kernel's tcp_states.h

// The maximum backlog of every IPv4 TCP socket listening on 127.0.0.1:`port`, one entry per
// socket (SO_REUSEPORT: one per worker). Empty when netlink fails.
std::vector<uint32_t> listenBacklogsOnce(int port) {
  std::vector<uint32_t> out;
  int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return out;
  struct {
    nlmsghdr nlh;
    inet_diag_req_v2 req;
  } msg{};
  msg.nlh.nlmsg_len = sizeof(msg);
  msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  msg.req.sdiag_family = AF_INET;
  msg.req.sdiag_protocol = IPPROTO_TCP;
  msg.req.idiag_states = 1u << kTcpListen;
  // The kernel skips listening sockets of other ports itself: a short dump that other tests'
  // sockets (a busy CI machine opens thousands) cannot make inconsistent.
  msg.req.id.idiag_sport = htons(static_cast<uint16_t>(port));
  sockaddr_nl nl{};
  nl.nl_family = AF_NETLINK;
  if (sendto(fd, &msg, sizeof(msg), 0, reinterpret_cast<sockaddr*>(&nl), sizeof(nl)) < 0) {
    close(fd);
    return out;
  }
  std::vector<char> buf(64 * 1024);
  for (bool done = false; !done;) {
    ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n <= 0) break;
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
        done = true;
        break;
      }
      const auto* d = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
      if (ntohs(d->id.idiag_sport) == port && d->id.idiag_src[0] == htonl(INADDR_LOOPBACK)) {
        out.push_back(d->idiag_wqueue);
      }
    }
  }
  close(fd);
  return out;
}

// As above, asked again (up to 5 times, 100 ms apart) while fewer than `expected` sockets show:
// a dump interrupted by a change of the socket table (NLM_F_DUMP_INTR) can leave one out.
std::vector<uint32_t> listenBacklogs(int port, size_t expected = 2) {
  std::vector<uint32_t> out;
  for (int attempt = 0; attempt < 5; ++attempt) {
    out = listenBacklogsOnce(port);
    if (out.size() >= expected) break;
    usleep(100 * 1000);
  }
  return out;
}

uint32_t somaxconn() {
  std::ifstream f("/proc/sys/net/core/somaxconn");
  uint32_t v = 0;
  f >> v;
  return v;
}

std::string config(const std::string& backlog_line) {
  return R"(
workers: 2
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
)" + backlog_line +
         R"(clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";
}

class ListenBacklogTest : public ::testing::Test {
 protected:
  void SetUp() override { backend_ = std::make_unique<EchoBackend>("echo"); }
  std::map<std::string, std::string> vars() const { return {{"BACKEND", backend_->address()}}; }
  std::unique_ptr<EchoBackend> backend_;
};

TEST_F(ListenBacklogTest, ConfiguredBacklogReachesEveryWorkersSocket) {
  const uint32_t max = somaxconn();
  ASSERT_GT(max, 1u);
  const uint32_t wanted = max > 300 ? 300 : max - 1;  // below the kernel's cap, not 128
  Gateway gw(config("    backlog: " + std::to_string(wanted) + "\n"), vars());
  ASSERT_TRUE(gw.ready());
  std::vector<uint32_t> backlogs = listenBacklogs(gw.port());
  ASSERT_EQ(backlogs.size(), 2u) << "one socket per worker";
  for (uint32_t b : backlogs) EXPECT_EQ(b, wanted);
  // And the listener serves.
  RawConnection conn(gw.port());
  ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/echo/x", {}, "", gw.port())));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
}

TEST_F(ListenBacklogTest, DefaultBacklogIsSomaxconn) {
  Gateway gw(config(""), vars());
  ASSERT_TRUE(gw.ready());
  std::vector<uint32_t> backlogs = listenBacklogs(gw.port());
  ASSERT_EQ(backlogs.size(), 2u);
  for (uint32_t b : backlogs) EXPECT_EQ(b, somaxconn());
}

TEST_F(ListenBacklogTest, BacklogAboveSomaxconnIsCappedByTheKernel) {
  Gateway gw(config("    backlog: 65535\n"), vars());
  ASSERT_TRUE(gw.ready());
  std::vector<uint32_t> backlogs = listenBacklogs(gw.port());
  ASSERT_EQ(backlogs.size(), 2u);
  for (uint32_t b : backlogs) EXPECT_EQ(b, std::min<uint32_t>(65535, somaxconn()));
}

}  // namespace
}  // namespace sluice::test
