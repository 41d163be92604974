package test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/ontimedns/ontime/internal/freeport"
)

// manifests decodes every document of deploy/kubernetes/ strictly (an
// unknown or misspelt field is an error) into its k8s.io/api type.
type manifests struct {
	deployments []appsv1.Deployment
	configMaps  map[string]corev1.ConfigMap
	services    []corev1.Service
	pdbs        []policyv1.PodDisruptionBudget
	other       []map[string]any
}

func loadManifests(t *testing.T) manifests {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "deploy", "kubernetes", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no manifests in deploy/kubernetes")
	}
	m := manifests{configMaps: map[string]corev1.ConfigMap{}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(b), "\n---\n") {
			var head struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			strict := func(into any) {
				if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
					t.Fatalf("%s document %d (%s): %v", f, i, head.Kind, err)
				}
			}
			switch head.Kind {
			case "Deployment":
				var d appsv1.Deployment
				strict(&d)
				m.deployments = append(m.deployments, d)
			case "ConfigMap":
				var c corev1.ConfigMap
				strict(&c)
				m.configMaps[c.Name] = c
			case "Service":
				var s corev1.Service
				strict(&s)
				m.services = append(m.services, s)
			case "PodDisruptionBudget":
				var p policyv1.PodDisruptionBudget
				strict(&p)
				m.pdbs = append(m.pdbs, p)
			case "Namespace":
				var n corev1.Namespace
				strict(&n)
			case "ServiceMonitor": // the Prometheus Operator's: not in k8s.io/api
				var o map[string]any
				strict(&o)
				m.other = append(m.other, o)
			default:
				t.Fatalf("%s document %d: unexpected kind %q", f, i, head.Kind)
			}
		}
	}
	return m
}

// TestManifestsDecodeAndAgree: every manifest decodes strictly, and they
// agree with each other and with the Corefile: probes on the ready and
// health plugins' ports, volumes from the ConfigMaps that exist, the
// Service and the budget selecting the Deployment's pods, a non-root user
// and a read-only root filesystem, requests set.
func TestManifestsDecodeAndAgree(t *testing.T) {
	m := loadManifests(t)
	if len(m.deployments) != 1 || len(m.services) != 1 || len(m.pdbs) != 1 {
		t.Fatalf("%d deployments, %d services, %d budgets", len(m.deployments), len(m.services), len(m.pdbs))
	}
	d := m.deployments[0]
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	corefile := m.configMaps["ontime"].Data["Corefile"]
	switch {
	case d.Spec.Replicas == nil || *d.Spec.Replicas < 2:
		t.Error("fewer than two replicas")
	case len(pod.TopologySpreadConstraints) == 0 && pod.Affinity == nil:
		t.Error("replicas not spread over nodes")
	case pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot:
		t.Error("not run as non-root")
	case c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem:
		t.Error("root filesystem writable")
	case c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero():
		t.Error("no resource requests")
	case c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/ready" || !strings.Contains(corefile, fmt.Sprintf("ready :%d", c.ReadinessProbe.HTTPGet.Port.IntValue())):
		t.Error("readiness probe not on the ready plugin")
	case c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/health" || !strings.Contains(corefile, fmt.Sprintf("health :%d", c.LivenessProbe.HTTPGet.Port.IntValue())):
		t.Error("liveness probe not on the health plugin")
	}
	for _, v := range pod.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		if _, ok := m.configMaps[v.ConfigMap.Name]; !ok {
			t.Errorf("volume %s: no ConfigMap %s", v.Name, v.ConfigMap.Name)
		}
	}
	for _, plugin := range []string{"codel", "fastpack", "alias", "zonestore", "prometheus", "directory"} {
		if !strings.Contains(corefile, plugin) {
			t.Errorf("the Corefile does not use %s", plugin)
		}
	}
	labels := d.Spec.Template.Labels
	matches := func(sel map[string]string) bool {
		for k, v := range sel {
			if labels[k] != v {
				return false
			}
		}
		return len(sel) > 0
	}
	if !matches(m.services[0].Spec.Selector) || !matches(m.pdbs[0].Spec.Selector.MatchLabels) {
		t.Error("the Service or the budget does not select the Deployment's pods")
	}
	protos := map[corev1.Protocol]bool{}
	for _, p := range m.services[0].Spec.Ports {
		if p.Port == 53 {
			protos[p.Protocol] = true
		}
	}
	if !protos[corev1.ProtocolUDP] || !protos[corev1.ProtocolTCP] {
		t.Error("the Service does not carry DNS over UDP and TCP")
	}
}

// TestConfigMapCorefileServes: the ConfigMap's Corefile, with its ports
// moved to loopback and its directory to a ConfigMap-style mount, is
// started by the real binary: ready, healthy, answering for its zones;
// a zone update arriving as the kubelet makes it (a symlink swap) is
// served without one wrong answer meanwhile.
func TestConfigMapCorefileServes(t *testing.T) {
	m := loadManifests(t)
	zones := m.configMaps["ontime-zones"].Data
	cm := &configMap{t: t, dir: t.TempDir()}
	cm.publish(zones)
	port, health, ready, prom := freeport.Get(t), freeport.Get(t), freeport.Get(t), freeport.Get(t)
	corefile := strings.NewReplacer(
		".:53 {", fmt.Sprintf(".:%d {\n    bind 127.0.0.1", port),
		"health :8080", fmt.Sprintf("health 127.0.0.1:%d", health),
		"ready :8181", fmt.Sprintf("ready 127.0.0.1:%d", ready),
		"prometheus :9153", fmt.Sprintf("prometheus 127.0.0.1:%d", prom),
		"/etc/ontime/zones", cm.dir,
		"reload 10s", "reload 100ms",
		"upstream /etc/resolv.conf", "upstream 127.0.0.1:9",
	).Replace(m.configMaps["ontime"].Data["Corefile"])
	path := filepath.Join(t.TempDir(), "Corefile")
	os.WriteFile(path, []byte(corefile), 0o644)
	s := start(t, "coredns", exec.Command(corednsBin, "-conf", path), port, "example.org")

	for what, addr := range map[string]string{"ready": fmt.Sprintf("127.0.0.1:%d/ready", ready), "health": fmt.Sprintf("127.0.0.1:%d/health", health)} {
		resp, err := http.Get("http://" + addr)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", what, resp.StatusCode)
		}
	}
	if got := answerA(t, s.addr, "www.example.org."); got != "192.0.2.80" {
		t.Fatalf("www: %s", got)
	}

	stop := querying(s.addr, "www.example.org.", 2, "192.0.2.80", "192.0.2.81")
	updated := strings.Replace(strings.Replace(zones["db.example.org"], "2026120301", "2026120302", 1), "192.0.2.80", "192.0.2.81", 1)
	cm.publish(map[string]string{"db.example.org": updated})
	eventually(t, "the updated zone", func() bool { return answerA(t, s.addr, "www.example.org.") == "192.0.2.81" })
	if wrong, all, first := stop(); wrong > 0 {
		t.Fatalf("%d wrong answers of %d during the update; the first: %s", wrong, all, first)
	}
}
